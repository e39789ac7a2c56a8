/** A failed request, answered as the API server answers: a `Status` object with a reason and a code. */
export class StatusError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details: {
      readonly name?: string;
      readonly group?: string;
      readonly kind?: string;
      /** As kube-apiserver writes a StatusCause: its type under the JSON name "reason". */
      readonly causes?: readonly {
        readonly reason: string;
        readonly message: string;
        readonly field?: string;
      }[];
    } = {},
  ) {
    super(message);
  }

  /** The `Status` body, without what Go's JSON leaves out when empty (an empty group, reason or details). */
  body(): Record<string, unknown> {
    const details = Object.fromEntries(
      Object.entries(this.details).filter(([, value]) => value !== "" && value !== undefined),
    );
    return {
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: this.message,
      ...(this.reason ? { reason: this.reason } : {}),
      ...(Object.keys(details).length > 0 ? { details } : {}),
      code: this.code,
    };
  }
}

export interface ResourceRef {
  readonly group: string;
  /** The plural resource name, which Status details call "kind". */
  readonly name: string;
}

export const notFound = (resource: ResourceRef, name: string) =>
  new StatusError(404, "NotFound", `${qualified(resource)} "${name}" not found`, {
    name,
    group: resource.group,
    kind: resource.name,
  });

export const alreadyExists = (resource: ResourceRef, name: string) =>
  new StatusError(409, "AlreadyExists", `${qualified(resource)} "${name}" already exists`, {
    name,
    group: resource.group,
    kind: resource.name,
  });

export const conflict = (resource: ResourceRef, name: string) =>
  new StatusError(
    409,
    "Conflict",
    `Operation cannot be fulfilled on ${qualified(resource)} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
    { name, group: resource.group, kind: resource.name },
  );

export const invalid = (kind: string, name: string, message: string) =>
  new StatusError(422, "Invalid", `${kind} "${name}" is invalid: ${message}`, { name, kind });

export const badRequest = (message: string) => new StatusError(400, "BadRequest", message);

function qualified(resource: ResourceRef): string {
  return resource.group ? `${resource.name}.${resource.group}` : resource.name;
}
