# syntax=docker/dockerfile:1
# Turnout service image: one image, the role is chosen at start (--role api|projector|dispatcher|all).

# ---- build: full dependencies (better-sqlite3 compiles here if no prebuilt binary fits), tsc ----
FROM node:20-slim AS build
WORKDIR /app
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
# The sources are not here yet, so the project's own `prepare` (npm run build) cannot run: skip
# every script, then run the one install script the service needs (better-sqlite3's binary).
RUN npm ci --ignore-scripts \
 && npm rebuild better-sqlite3
COPY tsconfig.json tsconfig.build.json ./
COPY packages ./packages
COPY domain ./domain
COPY validation ./validation
COPY eventlog ./eventlog
COPY projections ./projections
COPY commands ./commands
COPY dispatcher ./dispatcher
COPY runtime ./runtime
COPY api ./api
COPY cli ./cli
COPY bench ./bench
# The operators' console (/console): esbuild bundles it into dist/console beside the compiled service.
COPY console ./console
RUN npx tsc -p tsconfig.build.json \
 && node console/build.mjs \
 && npm prune --omit=dev

# ---- runtime: compiled output and production dependencies only, as a non-root user ----
FROM node:20-slim AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    TURNOUT_DATA_DIR=/data
WORKDIR /app
COPY --from=build --chown=node:node /app/package.json ./
COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist
# `npx turnout` (the bin) runs the compiled CLI through this shim.
COPY --chown=node:node bin ./bin
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 3000
# node:20-slim has no curl: probe /healthz with node itself (roles without HTTP override this).
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["node", "dist/api/server.js"]
CMD ["--role", "all"]
