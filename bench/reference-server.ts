// The yardstick of bench:http: the least a JSON API over PostgreSQL does per request. A plain
// Fastify instance (no hooks, no plugins, Fastify's default: no logging) with a postgres.js pool
// sized like the app's (10), answering POST /reference {project} with one primary-key lookup of
// the project as a small JSON object (a body schema and a response schema, like the app's
// routes), and GET /health for the bench to wait on. bench/server-process.ts starts it with npm
// start's Node flags, so that both sides run under the same V8 settings.
// The lookup is a tagged query, so postgres.js prepares it once per connection (its default).
// postgres.js is the installed one, patched as the app's is (patches/): unpatched, this server's
// CPU per request grew with every request it served at 50 connections (npm run bench:drift).
// Env: DATABASE_URL, PORT (HOST 127.0.0.1).
import Fastify from 'fastify'
import postgres from 'postgres'

const url = process.env.DATABASE_URL
const port = Number(process.env.PORT)
if (!url || !Number.isInteger(port)) {
  process.stderr.write('reference-server: DATABASE_URL and PORT are needed\n')
  process.exit(2)
}
const sql = postgres(url, { max: 10, onnotice: () => {}, connection: { application_name: 'growthdesk-bench-reference' } })
const server = Fastify({ logger: false })
const Project = { type: 'object', properties: { id: { type: 'string' }, name: { type: 'string' }, timezone: { type: 'string' } }, required: ['id', 'name', 'timezone'] }
server.get('/health', async () => ({ ok: true }))
server.post<{ Body: { project: string } }>(
  '/reference',
  {
    schema: {
      body: { type: 'object', properties: { project: { type: 'string', minLength: 1 } }, required: ['project'], additionalProperties: false },
      response: { 200: Project, 404: { type: 'object', properties: { error: { type: 'string' } } } },
    },
  },
  async (request, reply) => {
    const [row] = await sql`select id, name, timezone from projects where id = ${request.body.project}`
    return row ?? reply.code(404).send({ error: 'not_found' })
  }
)
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void server.close().then(() => sql.end({ timeout: 5 })).finally(() => process.exit(0))
  })
}
await server.listen({ host: '127.0.0.1', port })
