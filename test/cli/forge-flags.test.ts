import { describe, expect, it } from "vitest";
import { ciPullRequest, forgeFromFlags } from "../../src/cli/forge-flags.js";

const FLAGS = { forgeTokenEnv: "GITFLEET_FORGE_TOKEN" };

describe("the forge from flags and CI's environment", () => {
  it.each([
    {
      name: "GitHub Actions",
      env: {
        GITHUB_ACTIONS: "true",
        GITHUB_API_URL: "https://ghe.acme.io/api/v3",
        GITHUB_REPOSITORY: "acme/fleet",
      },
      forge: { kind: "github", repo: "acme/fleet" },
    },
    {
      name: "Gitea Actions",
      env: {
        GITHUB_ACTIONS: "true",
        GITEA_ACTIONS: "true",
        GITHUB_API_URL: "https://code.acme.io/api/v1",
        GITHUB_REPOSITORY: "acme/fleet",
      },
      forge: { kind: "gitea", repo: "acme/fleet" },
    },
    {
      name: "GitLab CI",
      env: {
        GITLAB_CI: "true",
        CI_API_V4_URL: "https://gitlab.acme.io/api/v4",
        CI_PROJECT_PATH: "platform/fleet",
      },
      forge: { kind: "gitlab", repo: "platform/fleet" },
    },
  ])("reads $name", ({ env, forge }) => {
    expect(forgeFromFlags(FLAGS, { env })).toMatchObject(forge);
  });

  it("lets flags win over the environment, and reads the rest from the repository's URL", () => {
    const env = { GITHUB_ACTIONS: "true", GITHUB_REPOSITORY: "acme/other" };
    expect(forgeFromFlags({ ...FLAGS, forgeRepo: "acme/fleet" }, { env })).toMatchObject({
      repo: "acme/fleet",
    });
    expect(forgeFromFlags(FLAGS, { env: {}, repoUrl: "git@gitlab.com:acme/fleet.git" })).toMatchObject({
      kind: "gitlab",
      repo: "acme/fleet",
    });
    expect(() => forgeFromFlags(FLAGS, { env: {}, repoUrl: "https://git.acme.io/a/b.git" })).toThrow(
      /cannot be told from its host/,
    );
  });

  it.each([
    [{ GITHUB_REF: "refs/pull/42/merge" }, 42],
    [{ GITHUB_REF: "refs/heads/main" }, undefined],
    [{ CI_MERGE_REQUEST_IID: "7" }, 7],
    [{ CI_MERGE_REQUEST_IID: "7; rm" }, undefined],
    [{}, undefined],
  ])("finds the pull request in %o", (env, pr) => {
    expect(ciPullRequest(env)).toBe(pr);
  });
});
