# One image for the three apps, the migrate job and the demo; docker-compose.yml picks the command.
# The build is `npm run build` (tsconfig.build.json: apps, libs, scripts, examples) over the sources the
# image runs: bench/ and test/ are not copied, so neither the benchmark harness nor test helpers ship.
# `node scripts/check-image.mjs` (CI) builds from exactly what this file copies.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY apps ./apps
COPY libs ./libs
COPY scripts ./scripts
COPY examples ./examples
# npm run build builds the TypeScript client too (CONTRACT §14); the runtime stage takes none of it.
COPY clients/typescript ./clients/typescript
RUN npm run build

FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production
# The apps' Node.js flags (libs/runtime/src/app-node-flags.ts says why): a larger young generation.
ENV NODE_OPTIONS="--max-semi-space-size=32"
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
USER node
# Overridden per service in docker-compose.yml.
CMD ["node", "dist/apps/config-api/src/main.js"]
