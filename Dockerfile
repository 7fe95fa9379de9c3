# syntax=docker/dockerfile:1
# Launched Weekly: the web server and the Monday digest in one image.
#   docker build -t launched-weekly .
#   docker run -p 3000:3000 --env-file .env.production -v launched-data:/data launched-weekly
# tests/release/image-steps.test.ts repeats these steps (the COPY lines, .dockerignore, the RUN lines of the
# build stage, CMD and HEALTHCHECK) in a temporary directory, so it fails when they drift.

FROM node:24-bookworm-slim AS build
WORKDIR /app
# The dependency layer is rebuilt only when the manifest or the lock file changes.
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm npm ci --no-audit --no-fund
COPY . .
# The build compiles the server and its CLIs to JavaScript (dist/bin); then only what runs in
# production stays: no TypeScript loader, no build or test tools. --omit=optional too: npm keeps
# a devDependency that a production one names as an optional peer (resend → @react-email/render,
# which brings prettier), though the compiled server has it bundled and never loads it.
# The share cards and the embedded database's seed are kept between image builds in a BuildKit
# cache (content-addressed, see scripts/share-images.ts), so a rebuild draws only new weeks' cards
# and the cache never ships in the image.
RUN --mount=type=cache,target=/app/node_modules/.cache/launched-weekly npm run build && npm prune --omit=dev --omit=optional --no-audit --no-fund

FROM node:24-bookworm-slim
# tini as PID 1: forwards SIGTERM to node (which drains requests and closes the store) and reaps zombies.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/*
# glibc's allocator as npm start sets it: one arena for every thread; blocks of 8 KiB and more
# mapped on their own and handed back when freed (V8's compilers, among others, take memory in
# blocks of 8-32 KiB, which in the shared heap left holes that stayed resident: the runtime bench
# measured ~3 MB less RSS after 10,000 requests than with 64 KiB, docs/performance.md), and free
# memory at the top of the heap handed back from 64 KiB. tests/server/production-runtime.test.ts keeps
# the two in step.
ENV NODE_ENV=production DATA_DIR=/data PORT=3000 HOST=0.0.0.0 MALLOC_ARENA_MAX=1 MALLOC_MMAP_THRESHOLD_=8192 MALLOC_TRIM_THRESHOLD_=65536
WORKDIR /app
# Owned by root and read-only to the server: only /data is writable.
COPY --from=build /app /app
RUN mkdir -p /data && chown node:node /data
VOLUME /data
USER node
EXPOSE 3000
# No curl in the slim image: node's own fetch asks the liveness endpoint.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "--"]
# V8's memory settings for a small host: the young generation at 4 MB per semi-space, from the
# start and at most (2 MB each saved a few MB of RSS but cost the page path about a fifth of its
# throughput against a plain static server, docs/performance.md); the old generation grown to
# 1.25 x what the last full collection kept (V8's default is up to 4 x); WebAssembly (the embedded
# database) kept on V8's baseline compiler, whose optimising tier would hold ~100 MB more.
# tests/server/production-runtime.test.ts checks this is npm start's command.
CMD ["node", "--max-semi-space-size=4", "--min-semi-space-size=4", "--heap-growing-percent=25", "--liftoff-only", "dist/bin/server.js"]
