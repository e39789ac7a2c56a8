# gitfleet controller image: a small Node.js 20 runtime, non-root, no build tools.
# Build: docker build -t gitfleet .
# Run:   docker run --rm -v "$PWD:/fleet:ro" gitfleet validate /fleet
#        docker run -e GITFLEET_GIT_TOKEN -e GITFLEET_WEBHOOK_SECRET -p 8080:8080 gitfleet \
#          run --repo https://git.example.com/platform/fleet.git --no-sync --listen 0.0.0.0:8080
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY bin bin
COPY schema schema
COPY src src
COPY bench bench
# npm ci runs the prepare script, which compiles TypeScript into dist/.
RUN npm ci --no-audit --no-fund && npm prune --omit=dev

FROM node:20-bookworm-slim
ENV NODE_ENV=production
# ssh-keygen signs status commits (--signing-key); nothing else is needed at run time.
RUN apt-get update && apt-get install -y --no-install-recommends openssh-client && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/dist/src dist/src
COPY --from=build /app/bin bin
COPY --from=build /app/schema schema
COPY example-repo example-repo
USER node
# gitfleet run --listen 0.0.0.0:8080 serves /webhook, /healthz and /readyz here.
EXPOSE 8080
ENTRYPOINT ["node", "/app/bin/gitfleet.js"]
CMD ["validate", "/fleet"]
