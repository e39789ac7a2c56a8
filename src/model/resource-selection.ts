import { matchesLabelSelector } from "../apimachinery/label-selector.js";
import type { Resource, ResourceSelector } from "./types.js";

/** True when a resource selector picks the resource (a name makes the label selector irrelevant). */
export function matchesResourceSelector(selector: ResourceSelector, resource: Resource): boolean {
  if (selector.apiVersion !== resource.apiVersion || selector.kind !== resource.kind) return false;
  if (selector.namespace !== undefined && selector.namespace !== resource.namespace) return false;
  if (selector.name !== undefined) return selector.name === resource.name;
  return (
    selector.labelSelector === undefined || matchesLabelSelector(selector.labelSelector, resource.labels)
  );
}

/** What a Placement or Override selects: listed apps and resource selectors, unioned. */
export interface ResourceSelection {
  readonly apps?: readonly string[];
  readonly resourceSelectors?: readonly ResourceSelector[];
}

/** True when a selection picks the resource: its app is listed, or one of its selectors matches. */
export function selectsResource(selection: ResourceSelection, resource: Resource): boolean {
  if (selection.apps?.includes(resource.app)) return true;
  return (selection.resourceSelectors ?? []).some((selector) => matchesResourceSelector(selector, resource));
}
