# One image for every role of the split deployment (see docker-compose.yml and README "Split mode").
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY . .
# npm ci also builds the dashboard (the prepare script), which needs the sources copied above.
RUN npm ci --no-audit --no-fund && npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/schema ./schema
COPY --from=build /app/dist-dashboard ./dist-dashboard
COPY package.json ./
USER node
ENTRYPOINT ["node", "--max-semi-space-size=64", "dist/main.js"]
CMD ["all"]
