// CORS for browser clients (MCP clients in a page, the Inspector): PUBLIC_URL's origin and
// ALLOWED_ORIGINS may call; the headers MCP and bearer auth need are allowed and exposed.
import fp from 'fastify-plugin'
import cors from '@fastify/cors'
import type { FastifyInstance } from 'fastify'
import { mcpAllowedOrigins } from '../core/origins.ts'

async function corsPlugin(app: FastifyInstance, options: { publicUrl: string; allowedOrigins: string[] }) {
  const allowed = mcpAllowedOrigins(options.publicUrl, options.allowedOrigins)
  await app.register(cors, {
    origin: (origin, cb) => cb(null, origin !== undefined && allowed.has(origin)),
    methods: ['GET', 'POST', 'PATCH', 'PUT', 'DELETE'],
    allowedHeaders: ['authorization', 'content-type', 'mcp-protocol-version', 'mcp-method', 'mcp-name', 'x-service-project', 'last-event-id'],
    exposedHeaders: ['WWW-Authenticate', 'Mcp-Protocol-Version'],
    maxAge: 600,
  })
}

export default fp(corsPlugin, { name: 'cors' })
