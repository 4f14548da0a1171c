// The Workspace page: the workspace's tools, each enabled or disabled (owners switch them).
import type { FastifyInstance } from 'fastify'
import { listWorkspaceTools, setToolEnabled } from '../../tools/workspace-tools.ts'
import { flash, formPost, run, type Form } from './actions.ts'

export function workspacePages(app: FastifyInstance) {
  app.get('/console/workspace', async (request, reply) => {
    const { tools } = await run(request, listWorkspaceTools, {})
    return reply.page('workspace', { title: 'Workspace', tools, canEdit: request.consoleUser.workspaceRole === 'owner' })
  })

  app.post<{ Params: { name: string } }>('/console/workspace/tools/:name', formPost(app), async (request, reply) => {
    const enabled = (request.body as Form).enabled === 'true'
    await run(request, setToolEnabled, { name: request.params.name, enabled })
    flash(request, 'ok', `${request.params.name} is ${enabled ? 'enabled' : 'disabled'}.`)
    return reply.redirect('/console/workspace')
  })
}
