import { describe, expect, it } from "vitest";
import { FleetRepo } from "../../src/git/fleet-repo.js";
import { redactUrl } from "../../src/git/http-push.js";
import { tempDir } from "../helpers/git-repo.js";

describe("opening a fleet repo", () => {
  it("refuses a scheme it has no transport for, with what to do instead", async () => {
    await expect(FleetRepo.open({ location: "file:///srv/git/fleet.git" })).rejects.toThrow(
      /only local paths, http\(s\) URLs and SSH remotes are supported; clone it and pass the path/,
    );
  });

  it.each([
    [
      "git@github.com:platform/fleet.git",
      /needs a private key and a known_hosts file .*host keys are always checked/,
    ],
    ["ssh://git@git.example.com:2222/platform/fleet.git", /needs a private key and a known_hosts file/],
    ["ssh://-oProxyCommand=touch%20x/fleet.git", /not an SSH remote gitfleet can use/],
    [
      "-oProxyCommand=x@host:fleet.git",
      /only local paths|not a Git repository|not an SSH remote|start with "-"/,
    ],
    ["git@-oProxyCommand=x:fleet.git", /not an SSH remote gitfleet can use|start with "-"/],
    ["git@github.com:-upload-pack=x", /may not start with "-"/],
  ])("checks the SSH remote %s before anything runs", async (location, error) => {
    const { dir, cleanup } = tempDir("gitfleet-ssh-open-");
    try {
      await expect(FleetRepo.open({ location, cacheDir: dir })).rejects.toThrow(error);
    } finally {
      cleanup();
    }
  });

  it("keeps each SSH remote in a cache of its own and names it as it is", async () => {
    const { dir, cleanup } = tempDir("gitfleet-ssh-cache-");
    try {
      const ssh = { keyFile: `${dir}/key`, knownHostsFile: `${dir}/known_hosts` };
      const locations = [
        "git@github.com:platform/fleet.git",
        "git@github.com:platform/other-fleet.git",
        "ssh://git@github.com/platform/fleet.git",
      ];
      const repos = await Promise.all(
        locations.map((location) => FleetRepo.open({ location, cacheDir: dir, ssh })),
      );
      expect(new Set(repos.map((repo) => repo.gitdir)).size).toBe(3);
      expect(repos.map((repo) => repo.describe())).toEqual(locations);
    } finally {
      cleanup();
    }
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
