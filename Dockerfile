# syntax=docker/dockerfile:1
# Build: compile TypeScript. Runtime: production dependencies and the compiled output only, as a non-root user.
# Node 24 LTS. The image expects DATABASE_URL (see docker-compose.yml); the embedded PostgreSQL binaries are left out.
# One image, three roles: ROLE=api, ROLE=worker, or ROLE=all (the default).

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY patches ./patches
# Scripts are off for dependencies; the project's own patches (patches/, see README) are applied explicitly.
RUN npm ci --ignore-scripts && npx patch-package
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000
WORKDIR /app
COPY package.json package-lock.json ./
COPY patches ./patches
RUN npm ci --omit=dev --omit=optional --ignore-scripts && npx patch-package && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY db ./db
COPY openapi.yaml ./
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+process.env.PORT+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# The exec form makes node PID 1 itself, so SIGTERM reaches the server's own handler: a graceful shutdown.
CMD ["node", "dist/server.js"]
