# syntax=docker/dockerfile:1
# The switchyard router image: Node 24 (the router runs its TypeScript sources
# directly; Node 24 strips the types), production dependencies only, non-root,
# no shell and no curl in the final image. Its smoke test is the CLI itself:
# `switchyard check URL...` (the Helm chart's `helm test` Pod runs it).
#
#   docker build -t switchyard:0.1.0 .
#   docker run switchyard:0.1.0 serve --backend http://vllm:8000   # any CLI command: serve, sim, bench load, check, status
#
# The entrypoint is the switchyard CLI; the command defaults to `serve`. The Helm chart sets its
# own command, /nodejs/bin/node --max-old-space-size=N /app/router/cli/bin.ts serve (values
# image.node and image.entrypoint, the heap from the memory limit); keep those paths when
# changing the base.

ARG NODE_IMAGE=node:24-bookworm-slim
ARG RUNTIME_IMAGE=gcr.io/distroless/nodejs24-debian12:nonroot

# Stage 1: production dependencies, installed from the lockfile without running
# any package's install scripts (none of the runtime dependencies needs one).
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && npm cache clean --force

# Stage 2: the sources the CLI loads, by allow-list: router/, discovery/, the
# engine simulator behind `switchyard sim` (loadtest/sim), and behind
# `switchyard bench load` its command (loadtest/load), the load generator
# (loadtest/bench) and the chart writer (loadtest/report). Test code lives in
# tests/ and loadtest/scenarios/, outside these folders; .dockerignore keeps the
# unit tests beside their modules (*.test.ts) out of the build context.
FROM ${NODE_IMAGE} AS sources
WORKDIR /app
COPY package.json ./
COPY router ./router
COPY discovery ./discovery
COPY loadtest/sim ./loadtest/sim
COPY loadtest/bench ./loadtest/bench
COPY loadtest/report ./loadtest/report
COPY loadtest/load ./loadtest/load

# Stage 3: distroless Node 24, user nonroot (65532), no shell.
FROM ${RUNTIME_IMAGE}
WORKDIR /app
ENV NODE_ENV=production
COPY --from=deps --chown=0:0 /app/node_modules ./node_modules
COPY --from=sources --chown=0:0 /app ./
USER 65532:65532
EXPOSE 8080 9090
# The switchyard CLI, so `docker run IMAGE serve --backend URL` and `docker run IMAGE sim` work
# (the distroless base's own entrypoint is the bare /nodejs/bin/node).
ENTRYPOINT ["/nodejs/bin/node", "--max-old-space-size=384", "/app/router/cli/bin.ts"]
CMD ["serve"]
