/** The field manager gitfleet's server-side applies are made as (managedFields says who owns what). */
export const FIELD_MANAGER = "gitfleet";
