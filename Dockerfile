# gitfleet controller image: a small Node.js 20 runtime, non-root, no build tools.
# Build: docker build -t gitfleet .
# Run:   docker run --rm -v "$PWD:/fleet:ro" gitfleet validate /fleet
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
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/dist/src dist/src
COPY --from=build /app/bin bin
COPY --from=build /app/schema schema
COPY example-repo example-repo
USER node
ENTRYPOINT ["node", "/app/bin/gitfleet.js"]
CMD ["validate", "/fleet"]
