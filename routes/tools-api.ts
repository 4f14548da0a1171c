// Tools over REST (spec 4.2): the registry's enabled tools, their contracts, and calls.
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { appError } from '../core/errors.ts'
import { ProjectRef } from '../schemas/atoms.ts'
import { responses } from './responses.ts'

const Contract = Type.Object({
  name: Type.String(),
  title: Type.String(),
  description: Type.String(),
  input_schema: Type.Unknown(),
  output_schema: Type.Unknown(),
  annotations: Type.Unknown(),
})
const Name = Type.Object({ name: Type.String({ pattern: '^[a-z][a-z0-9_]{0,63}$' }) })
const Headers = Type.Object({ 'x-service-project': Type.Optional(ProjectRef) })
const tags = ['tools']
const security = [{ bearer: [] }]

const toolsApi: FastifyPluginAsyncTypebox = async (app) => {
  app.addHook('onRequest', app.authenticate('tools-api'))

  app.get('/tools', {
    schema: { tags, security, summary: 'Tools enabled for the workspace', response: responses(Type.Object({ tools: Type.Array(Contract) })) },
  }, async (req) => {
    const disabled = await app.repos.workspaces.disabledTools(req.principal.workspaceId)
    return { tools: app.registry.contracts(disabled) }
  })

  app.get('/tools/:name', {
    schema: { tags, security, summary: "One tool's contract", params: Name, response: responses(Contract) },
  }, async (req) => {
    const disabled = await app.repos.workspaces.disabledTools(req.principal.workspaceId)
    const contract = app.registry.contract(req.params.name)
    if (!contract || !app.registry.names().includes(req.params.name) || disabled.includes(req.params.name)) {
      throw appError('NotFound', `There is no tool named '${req.params.name}' enabled in this workspace.`)
    }
    return contract
  })

  app.post('/tools/:name', {
    schema: {
      tags,
      security,
      summary: 'Call a tool',
      // No body schema here: the registry validates the arguments against the tool's own schema.
      description: "Body: the tool's arguments as a JSON object ({} or no body allowed). `project` in the body or X-Service-Project selects the project.",
      params: Name,
      headers: Headers,
      response: responses(Type.Object({ result: Type.Unknown() })),
    },
  }, async (req) => {
    const result = await app.registry.call(req.params.name, req.body ?? {}, {
      principal: req.principal,
      projectRef: req.headers['x-service-project'],
      log: req.log,
      asTool: true,
    })
    return { result }
  })
}

export default toolsApi
