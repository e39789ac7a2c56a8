import { describe, expect, it } from "vitest";
import { changeImage, type ImageChange } from "../../../src/render/override/image-overrider.js";
import { parseImageReference } from "../../../src/render/override/image-reference.js";

const DIGEST = "sha256:7d8a1f59c5e1a8e4e6bd2b7e7c6bde1e47c1d0b0c1d1f0c7c3c2a1b0f9e8d7c6";

describe("image references", () => {
  it.each([
    ["nginx", { registry: "", repository: "nginx", tag: "", digest: "" }],
    ["nginx:1.27", { registry: "", repository: "nginx", tag: "1.27", digest: "" }],
    ["library/nginx:1.27", { registry: "", repository: "library/nginx", tag: "1.27", digest: "" }],
    ["docker.io/library/nginx", { registry: "docker.io", repository: "library/nginx", tag: "", digest: "" }],
    [
      "registry.example.com:5000/team/app/web:2.1",
      { registry: "registry.example.com:5000", repository: "team/app/web", tag: "2.1", digest: "" },
    ],
    ["localhost/app:dev", { registry: "localhost", repository: "app", tag: "dev", digest: "" }],
    ["localhost:5000/app", { registry: "localhost:5000", repository: "app", tag: "", digest: "" }],
    [
      `ghcr.io/example/app@${DIGEST}`,
      { registry: "ghcr.io", repository: "example/app", tag: "", digest: DIGEST },
    ],
    [
      `ghcr.io/example/app:2@${DIGEST}`,
      { registry: "ghcr.io", repository: "example/app", tag: "2", digest: DIGEST },
    ],
  ])("parses %s", (text, expected) => {
    expect(parseImageReference(text)).toEqual(expected);
  });

  it.each([
    ["UPPER/case", 'repository "UPPER/case" must be lowercase path components'],
    ["app:bad tag", 'tag "bad tag" is not a valid tag'],
    ["app@sha256:xyz", 'digest "sha256:xyz" is not algorithm:hex'],
    ["", 'repository "" must be lowercase path components'],
  ])("rejects %j", (text, reason) => {
    expect(parseImageReference(text)).toEqual({ error: `"${text}" is not an image reference: ${reason}` });
  });
});

describe("imageOverrider", () => {
  const change = (
    component: ImageChange["component"],
    operator: ImageChange["operator"],
    value?: string,
  ): ImageChange => ({
    component,
    operator,
    ...(value === undefined ? {} : { value }),
  });
  it.each<[string, string, ImageChange, string]>([
    [
      "replace the registry",
      "ghcr.io/example/web:1.4",
      change("Registry", "replace", "harbor.idc.example.com:5000"),
      "harbor.idc.example.com:5000/example/web:1.4",
    ],
    [
      "add a registry to an image without one",
      "nginx:1.27",
      change("Registry", "replace", "mirror.example.com"),
      "mirror.example.com/nginx:1.27",
    ],
    [
      "add to the registry (concatenate)",
      "fictional.registry.example/app",
      change("Registry", "add", ".test"),
      "fictional.registry.example.test/app",
    ],
    [
      "remove the registry",
      "docker.io/library/nginx:1.27",
      change("Registry", "remove"),
      "library/nginx:1.27",
    ],
    [
      "add to the repository",
      "registry.example.com/imagename",
      change("Repository", "add", "/nginx"),
      "registry.example.com/imagename/nginx",
    ],
    [
      "replace the repository",
      "registry.example.com/a/b:1",
      change("Repository", "replace", "c"),
      "registry.example.com/c:1",
    ],
    ["replace the tag", "ghcr.io/app:1.0", change("Tag", "replace", "1.1"), "ghcr.io/app:1.1"],
    ["add to the tag", "ghcr.io/app:1.0", change("Tag", "add", "-debug"), "ghcr.io/app:1.0-debug"],
    ["remove the tag", "ghcr.io/app:1.0", change("Tag", "remove"), "ghcr.io/app"],
    [
      "a digest replaces the tag",
      "ghcr.io/app:1.0",
      change("Tag", "replace", DIGEST),
      `ghcr.io/app@${DIGEST}`,
    ],
    [
      "a tag replaces the digest",
      `ghcr.io/app@${DIGEST}`,
      change("Tag", "replace", "2.0"),
      "ghcr.io/app:2.0",
    ],
  ])("%s", (_name, image, imageChange, expected) => {
    expect(changeImage(image, imageChange)).toEqual({ image: expected });
  });

  it.each<[string, string, ImageChange, string]>([
    [
      "removing the repository",
      "registry.example.com/app:1",
      change("Repository", "remove"),
      'remove Repository "" on "registry.example.com/app:1" gives an invalid image: repository "" must be lowercase path components',
    ],
    [
      "a tag with a slash",
      "app:1",
      change("Tag", "replace", "a/b"),
      'replace Tag "a/b" on "app:1" gives an invalid image: tag "a/b" is not a valid tag',
    ],
    [
      "an unparsable image",
      "App",
      change("Tag", "replace", "1"),
      '"App" is not an image reference: repository "App" must be lowercase path components',
    ],
  ])("refuses %s", (_name, image, imageChange, error) => {
    expect(changeImage(image, imageChange)).toEqual({ error });
  });
});
