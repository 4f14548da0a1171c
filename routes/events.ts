// Event ingestion: POST /v1/events, with an ingest key (its project) or any other key + project.
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ErrorResponse, ProjectRef } from '../schemas/atoms.ts'
import { bearerSecurity } from './operation-route.ts'
import ingestEvents from '../tools/ingest-events.ts'
import { callOf } from '../core/operations.ts'

const Body = Type.Object({ project: Type.Optional(ProjectRef), events: ingestEvents.input.properties.events }, { additionalProperties: false })
const Headers = Type.Object({ 'x-service-project': Type.Optional(ProjectRef) })

const eventsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/v1/events', {
    onRequest: app.authenticate('ingest'),
    schema: {
      operationId: ingestEvents.name,
      tags: ['events'],
      security: bearerSecurity,
      summary: ingestEvents.title,
      description: ingestEvents.description,
      headers: Headers,
      body: Body,
      response: { 200: ingestEvents.output, '4xx': ErrorResponse, '5xx': ErrorResponse },
    },
  }, (req) => {
    const { project, ...args } = req.body
    const call = callOf(req, 'ingest', project)
    // An ingest key names its project itself.
    call.projectRef ??= req.principal.projectId ?? undefined
    return app.registry.invoke(ingestEvents, args, call)
  })
}

export default eventsRoutes
