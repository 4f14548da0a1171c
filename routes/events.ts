// Event ingestion: POST /v1/events, with an ingest key (its project) or any other key + project.
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ProjectRef } from '../schemas/atoms.ts'
import { responses } from './responses.ts'
import ingestEvents from '../tools/ingest-events.ts'

const Body = Type.Object({ project: Type.Optional(ProjectRef), events: ingestEvents.input.properties.events }, { additionalProperties: false })
const Headers = Type.Object({ 'x-service-project': Type.Optional(ProjectRef) })

const eventsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/v1/events', {
    onRequest: app.authenticate('ingest'),
    schema: { tags: ['events'], security: [{ bearer: [] }], summary: ingestEvents.title, description: ingestEvents.description, headers: Headers, body: Body, response: responses(ingestEvents.output) },
  }, (req) => {
    const { project, ...args } = req.body
    return req.operate(ingestEvents, args, project ?? req.headers['x-service-project'] ?? req.principal.projectId ?? undefined)
  })
}

export default eventsRoutes
