# syntax=docker/dockerfile:1
# ReportQL: the API server (node dist/src/main.js) and, with another command, a run worker
# (node dist/src/worker.js). scripts/image-steps.sh performs these steps without Docker.

ARG NODE_IMAGE=node:20.20-bookworm-slim

# --- build: full install from the lockfile, TypeScript (and WebAssembly text) to dist/ ------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/assemble-wasm.mjs scripts/prune-dist.mjs ./scripts/
COPY src ./src
COPY migrations ./migrations
COPY bench ./bench
RUN npm run build

# --- runtime: production dependencies from the lockfile, the built dist, a non-root user ---
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=4000 \
    DATA_DIR=/data
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY seeds ./seeds
COPY --from=build /app/dist/src ./dist/src
COPY --from=build /app/dist/migrations ./dist/migrations
# The code stays root's (read-only to the server); only DATA_DIR is the server's own.
RUN mkdir -p /data && chown node:node /data
VOLUME ["/data"]
USER node
EXPOSE 4000
# Ready: the database answers, the queue's tables can be read, the event connection is up.
# Status 1 unless /readyz answers 2xx: a fetch left pending (a socket closed unanswered, as
# while the server holds its port during start-up) must not end the check with status 0.
HEALTHCHECK --interval=15s --timeout=5s --start-period=120s --retries=3 \
  CMD ["node", "-e", "process.exitCode=1;fetch('http://127.0.0.1:'+(process.env.PORT||4000)+'/readyz',{signal:AbortSignal.timeout(4000)}).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
STOPSIGNAL SIGTERM
CMD ["node", "dist/src/main.js"]
