import { describe, expect, it } from "vitest";
import { type GitAuthFlags, gitCredentials, sshAccess } from "../../src/cli/git-auth.js";

const BASE: GitAuthFlags = { tokenEnv: "GITFLEET_GIT_TOKEN", githubApiUrl: "https://api.github.com" };
const APP = { githubAppId: "4242", githubAppInstallationId: "77", githubAppKeyFile: "/etc/gitfleet/app.pem" };

describe("Git authentication flags", () => {
  it.each([
    { name: "no credential", flags: {}, env: {}, source: undefined },
    {
      name: "the token in the environment",
      flags: {},
      env: { GITFLEET_GIT_TOKEN: "t" },
      source: "token in $GITFLEET_GIT_TOKEN",
    },
    {
      name: "another variable",
      flags: { tokenEnv: "FLEET_TOKEN" },
      env: { FLEET_TOKEN: "t", GITFLEET_GIT_TOKEN: "u" },
      source: "token in $FLEET_TOKEN",
    },
    {
      name: "a token file over the environment",
      flags: { tokenFile: "/etc/gitfleet/git/token" },
      env: { GITFLEET_GIT_TOKEN: "t" },
      source: "token file /etc/gitfleet/git/token",
    },
    {
      name: "a GitHub App",
      flags: APP,
      env: { GITFLEET_GIT_TOKEN: "t" },
      source: "GitHub App 4242 installation 77",
    },
  ])("chooses $name", ({ flags, env, source }) => {
    expect(gitCredentials({ ...BASE, ...flags }, env)?.source).toBe(source);
  });

  it.each([
    {
      flags: { githubAppId: "4242", githubAppKeyFile: "/k" },
      error:
        "a GitHub App needs --github-app-id, --github-app-installation-id and --github-app-key-file together",
    },
    {
      flags: { ...APP, tokenFile: "/t" },
      error: "--token-file and a GitHub App are two ways to authenticate: give one",
    },
    {
      flags: { ...APP, githubAppId: "my-app" },
      error: "--github-app-id and --github-app-installation-id are numbers",
    },
    { flags: { ...APP, githubApiUrl: "file:///etc" }, error: "--github-api-url is an http(s) URL" },
  ])("refuses $error", ({ flags, error }) => {
    expect(() => gitCredentials({ ...BASE, ...flags }, {})).toThrow(error);
  });

  it("takes an SSH key with its known_hosts, never one without the other", () => {
    expect(sshAccess({ ...BASE })).toBeUndefined();
    expect(sshAccess({ ...BASE, sshKeyFile: "/k", sshKnownHosts: "/h" })).toEqual({
      keyFile: "/k",
      knownHostsFile: "/h",
    });
    expect(() => sshAccess({ ...BASE, sshKeyFile: "/k" })).toThrow(
      "an SSH remote needs --ssh-key-file and --ssh-known-hosts together: host keys are always checked",
    );
    expect(() => sshAccess({ ...BASE, sshKnownHosts: "/h" })).toThrow(/together/);
  });
});
