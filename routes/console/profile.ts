// The signed-in user's own pages: Profile (who they are, with the way to MCP Access, whose
// pages are in keys.ts) and Connected apps (the MCP clients they authorized with OAuth, each
// of which they can disconnect).
import type { FastifyInstance } from 'fastify'
import { flash, formPost } from './actions.ts'

export function profilePages(app: FastifyInstance) {
  app.get('/console/profile', async (_request, reply) => reply.page('profile', { title: 'Profile' }))

  app.get('/console/connections', async (request, reply) => {
    const rows = await app.repos.oauth.connections(request.consoleUser.id)
    return reply.page('connections', { title: 'Connected apps', connections: rows.map((r) => ({ ...r, createdAt: r.createdAt.toISOString() })) })
  })

  app.post<{ Params: { id: string } }>('/console/connections/:id/revoke', formPost(app), async (request, reply) => {
    const done = await app.repos.oauth.revokeGrant(request.params.id, request.consoleUser.id, app.now())
    flash(request, done ? 'ok' : 'error', done ? 'Disconnected: its tokens no longer work.' : 'No such connection.')
    return reply.redirect('/console/connections')
  })
}
