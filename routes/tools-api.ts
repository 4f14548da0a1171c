// Tools over REST (spec 4.2): the tools the workspace has, their contracts, and calls. Each
// tool gets a documented `POST /v1/tools/<name>` with its own argument and result schemas (so
// /docs can call it); `POST /v1/tools/:name` answers for names that are not tools.
import { Type } from '@sinclair/typebox'
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest, FastifySchemaCompiler } from 'fastify'
import { ErrorResponse, ProjectRef, StringEnum } from '../schemas/atoms.ts'
import { bearerSecurity } from './operation-route.ts'
import { coercingAjv, validatorOf } from '../core/validation.ts'
import { callOf } from '../core/operations.ts'

const Contract = Type.Object({
  name: Type.String(),
  title: Type.String(),
  description: Type.String(),
  toolset: Type.String({ description: 'The toolset that lists it over MCP: `default`, or `admin` (listed with `/mcp?toolsets=admin`)' }),
  input_schema: Type.Object({}, { additionalProperties: true, description: "JSON Schema of the tool's arguments" }),
  output_schema: Type.Object({}, { additionalProperties: true, description: "JSON Schema of the tool's result" }),
  annotations: Type.Object({}, { additionalProperties: true, description: 'title, readOnlyHint, destructiveHint, idempotentHint' }),
  ui: Type.Optional(Type.Object({
    resourceUri: Type.String({ description: 'The MCP App view (a ui:// resource of /mcp) that renders its results.' }),
    visibility: Type.Optional(Type.Array(StringEnum(['model', 'app'] as const), { description: '["app"]: for views; MCP hosts keep it from the model. Absent: both.' })),
  }, { description: "Only on tools with an MCP App view: what MCP lists as the tool's _meta.ui." })),
})
const Name = Type.Object({ name: Type.String({ pattern: '^[a-z][a-z0-9_]{0,63}$' }) })
const Headers = Type.Object({ 'x-service-project': Type.Optional(ProjectRef) })
const tags = ['tools']
const errors = { '4xx': ErrorResponse, '5xx': ErrorResponse }

/** The arguments are the registry's to validate (the same errors as over MCP); the schema is for the docs. */
const argumentsCheckedByTheRegistry: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) =>
  httpPart === 'body' ? () => true : validatorOf(coercingAjv, schema as object)

/** The result as the registry writes it for every surface, inside `{"result": …}`. */
async function callTool(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply, name: string) {
  const text = await app.registry.callTool(name, request.body ?? {}, callOf(request, 'tools-api'))
  // A JSON string is sent as it is (Fastify serializes only objects).
  return reply.type('application/json; charset=utf-8').send(`{"result":${text}}`)
}

const toolsApi: FastifyPluginAsync = async (app) => {
  app.addHook('onRequest', app.authenticate('tools-api'))

  app.get<{ Querystring: { toolsets?: string } }>('/tools', {
    schema: {
      operationId: 'list_tools',
      tags,
      security: bearerSecurity,
      summary: 'Tools enabled for the workspace',
      description: 'Every tool the workspace has enabled, of every toolset; `toolsets` narrows the list to what MCP `tools/list` shows for the same parameter (`default`, `admin`, `all`).',
      querystring: Type.Object({ toolsets: Type.Optional(Type.String({ maxLength: 200, description: 'Comma-separated toolsets (`default` is always among them), or `all` (the default here).' })) }, { additionalProperties: false }),
      response: { 200: Type.Object({ tools: Type.Array(Contract) }), ...errors },
    },
  }, async (request) => ({ tools: await app.registry.toolsFor(request.principal, request.query.toolsets === undefined ? 'all' : app.registry.parseToolsets(request.query.toolsets)) }))

  app.get<{ Params: { name: string } }>('/tools/:name', {
    schema: { operationId: 'get_tool', tags, security: bearerSecurity, summary: "One tool's contract", params: Name, response: { 200: Contract, ...errors } },
  }, async (request) => app.registry.contract((await app.registry.toolFor(request.principal, request.params.name)).name))

  for (const contract of app.registry.contracts()) {
    const examples = app.registry.exampleArgs(contract.name)
    app.route({
      method: 'POST',
      url: `/tools/${contract.name}`,
      schema: {
        operationId: `call_${contract.name}`,
        tags,
        security: bearerSecurity,
        summary: `${contract.name}: ${contract.title}`,
        description: `${contract.description}\n\nProject tools take \`project\` (id or slug) in the body or the X-Service-Project header.`,
        headers: Headers,
        body: examples.length > 0 ? { ...contract.input_schema, examples } : contract.input_schema,
        response: { 200: Type.Object({ result: contract.output_schema }), ...errors },
      },
      validatorCompiler: argumentsCheckedByTheRegistry,
      handler: (request, reply) => callTool(app, request, reply, contract.name),
    })
  }

  app.post<{ Params: { name: string } }>('/tools/:name', {
    schema: { hide: true, params: Name, headers: Headers },
  }, (request, reply) => callTool(app, request, reply, request.params.name))
}

export default toolsApi
