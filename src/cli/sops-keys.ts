import { SopsKeyring } from "../credentials/sops-keyring.js";
import { readBoundedFile } from "../util/bounded-file.js";
import { CliError, ExitCode } from "./exit-codes.js";

/** The largest age key file read: thousands of identities, far more than any operator keeps. */
const MAX_KEY_FILE_BYTES = 256 * 1024;

/**
 * The age identities of `--sops-age-key-file`, or undefined without one. A file that cannot be read
 * or holds anything but identities and comments is a usage error naming the line; the identities
 * themselves are never printed.
 */
export async function readSopsKeyring(file: string | undefined): Promise<SopsKeyring | undefined> {
  if (!file) return undefined;
  const read = await readBoundedFile(file, MAX_KEY_FILE_BYTES);
  if (!read.ok) throw new CliError(`--sops-age-key-file: the key file ${read.reason}`, ExitCode.Usage);
  try {
    return SopsKeyring.fromKeyFile(new TextDecoder("utf-8").decode(read.bytes));
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new CliError(`--sops-age-key-file ${file}: ${reason}`, ExitCode.Usage);
  }
}
