// The console's stylesheet, script and icon, read once at start.
import fs from 'node:fs'
import path from 'node:path'
import type { FastifyPluginAsync } from 'fastify'

const types: Record<string, string> = {
  'console.css': 'text/css; charset=utf-8',
  'console.js': 'text/javascript; charset=utf-8',
  'favicon.svg': 'image/svg+xml',
}

const consoleAssets: FastifyPluginAsync = async (app) => {
  const dir = path.join(import.meta.dirname, '..', '..', 'views', 'assets')
  const files = new Map(Object.keys(types).map((name) => [name, fs.readFileSync(path.join(dir, name))]))
  app.get<{ Params: { file: string } }>('/console/assets/:file', { schema: { hide: true } }, async (request, reply) => {
    const body = files.get(request.params.file)
    if (!body) return reply.code(404).type('text/plain').send('not found')
    return reply.type(types[request.params.file]!).header('cache-control', 'public, max-age=3600').send(body)
  })
}

export default consoleAssets
