# gitfleet controller image: `gitfleet run` on Node.js 24 (the supported LTS), as a non-root user, no
# build tools.
#
# Build:  docker build -t gitfleet .
# Run:    docker run -p 8080:8080 \
#           -e GITFLEET_REPO=https://git.example.com/platform/fleet.git \
#           -e GITFLEET_GIT_TOKEN -e GITFLEET_WEBHOOK_SECRET \
#           -v /etc/gitfleet/members.kubeconfig:/etc/gitfleet/kubeconfig:ro \
#           gitfleet
#   GITFLEET_REPO       the fleet repo (an http(s) URL, or a path mounted into the container)
#   GITFLEET_GIT_TOKEN  a token that may read the repo and push the status branch (never in the image)
#   /etc/gitfleet/kubeconfig  a context per push-mode member cluster (KUBECONFIG points here)
# Other commands: docker run --rm -v "$PWD:/fleet:ro" gitfleet validate /fleet
# .ci/run checks this file with hadolint and runs the image's exact command (scripts/image-check.mjs).

# helm for Helm apps, built from the Go modules tools/helm/go.mod pins (as the tests build it).
FROM golang:1.26-bookworm AS helm
WORKDIR /src
COPY tools/helm tools/helm
COPY scripts/build-helm.sh scripts/build-helm.sh
RUN GITFLEET_HELM_BIN=out bash scripts/build-helm.sh

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY bin bin
COPY schema schema
COPY src src
COPY web web
# npm ci runs the prepare script: TypeScript into dist/, the dashboard into dist/dashboard/. The
# benchmarks are not copied: the image runs gitfleet, not them (some drive the test tier's servers).
RUN npm ci --no-audit --no-fund && npm prune --omit=dev --no-audit --no-fund

FROM node:24-bookworm-slim
ENV NODE_ENV=production \
    HOME=/home/node \
    KUBECONFIG=/etc/gitfleet/kubeconfig \
    GITFLEET_HELM=/usr/local/bin/helm
# ssh-keygen signs status commits (--signing-key); git and ssh fetch and push SSH remotes (ADR 0015);
# nothing else is needed at run time (prlimit, which bounds helm's and git's memory and CPU time,
# comes with util-linux, essential in the base image). Debian's security updates replace versions in place, so the
# packages are not pinned to one.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends git openssh-client \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/dist/src dist/src
COPY --from=build /app/dist/schema dist/schema
COPY --from=build /app/dist/dashboard dist/dashboard
COPY --from=build /app/bin bin
COPY --from=helm /src/out/helm /usr/local/bin/helm
COPY --from=build /app/schema schema
COPY example-repo example-repo
# `gitfleet` on the PATH (bin/gitfleet links to bin/gitfleet.js), for CI jobs that run the image
# (docs/examples/ci/).
ENV PATH=/app/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# The official image's node user (uid 1000): never root.
USER 1000:1000
# The dashboard, the JSON API, /metrics, /webhook, /healthz and /readyz.
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s \
  CMD ["node", "-e", "fetch('http://127.0.0.1:8080/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "/app/bin/gitfleet.js"]
CMD ["run", "--listen", "0.0.0.0:8080"]
