/** Process exit codes, documented in docs/commands.md. */
export const ExitCode = {
  /** Success: valid, nothing to do, everything placed. */
  Ok: 0,
  /** The fleet repo is invalid, or an operation failed. */
  Failed: 1,
  /** A plan found changes (plan convention). */
  Changes: 2,
  /** Some replicas could not be scheduled. */
  Unschedulable: 3,
  /** `plan`: the head revision does not validate (its problems are printed). */
  InvalidHead: 4,
  /** `plan`: the change removes more than the deletion budget allows; the sync holds it until a commit allows the token. */
  OverBudget: 5,
  /** The command line was wrong: unknown command, flag or argument. */
  Usage: 64,
  /** A bug in gitfleet: an unexpected exception. */
  Internal: 70,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/** An error the CLI reports in one line with a chosen exit code (bad flags, unreadable paths). */
export class CliError extends Error {
  readonly exitCode: ExitCodeValue;

  constructor(message: string, exitCode: ExitCodeValue = ExitCode.Failed) {
    super(message);
    this.name = "CliError";
    this.exitCode = exitCode;
  }
}
