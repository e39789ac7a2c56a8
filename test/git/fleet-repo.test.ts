import { describe, expect, it } from "vitest";
import { FleetRepo } from "../../src/git/fleet-repo.js";
import { redactUrl } from "../../src/git/http-push.js";
import { tempDir } from "../helpers/git-repo.js";

describe("opening a fleet repo", () => {
  it.each([
    ["git@github.com:platform/fleet.git"],
    ["ssh://git@git.example.com/platform/fleet.git"],
    ["file:///srv/git/fleet.git"],
  ])("refuses %s with what to do instead", async (location) => {
    await expect(FleetRepo.open({ location })).rejects.toThrow(
      /only local paths and http\(s\) URLs are supported .*clone it and pass the path, or use the https URL/,
    );
  });

  it("refuses a directory that is not a Git repository", async () => {
    const { dir, cleanup } = tempDir("gitfleet-notrepo-");
    try {
      await expect(FleetRepo.open({ location: dir })).rejects.toThrow(`${dir} is not a Git repository`);
    } finally {
      cleanup();
    }
  });

  it("never shows credentials embedded in a URL", () => {
    expect(redactUrl("https://bot:s3cr3t-value@git.example.com/platform/fleet.git")).toBe(
      "https://git.example.com/platform/fleet.git",
    );
    expect(redactUrl("not a url")).toBe("<unparseable URL>");
  });
});
