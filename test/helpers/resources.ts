import type { Resource } from "../../src/model/types.js";

/** A web Deployment template in namespace shop, labelled tier=front: the resource selector tests' subject. */
export const WEB_DEPLOYMENT: Resource = {
  app: "web",
  apiVersion: "apps/v1",
  group: "apps",
  kind: "Deployment",
  name: "web",
  namespace: "shop",
  labels: { tier: "front" },
  object: {},
  origin: { file: "apps/web/deployment.yaml", index: 0 },
};
