// The project-side API (spec 4.1) under /api/v1/mcp: each route is an operation of the registry.
import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ProjectRef } from '../schemas/atoms.ts'
import { EventId, SubmissionResult } from '../schemas/opportunities.ts'
import { responses } from './responses.ts'
import listOpportunities from '../tools/list-opportunities.ts'
import reviewOpportunity, { ReviewBody } from '../tools/review-opportunity.ts'
import submitOpportunity from '../tools/submit-opportunity.ts'
import getReviewHistory from '../tools/get-review-history.ts'
import getOverview from '../tools/get-overview.ts'
import getDailyOps from '../tools/get-daily-ops.ts'
import getDailyEventSummary from '../tools/get-daily-event-summary.ts'
import getEventStream from '../tools/get-event-stream.ts'

const Project = Type.Object({ project_id: ProjectRef })
const ProjectOpportunity = Type.Object({ project_id: ProjectRef, event_id: EventId })
const tags = ['project-side API']
const security = [{ bearer: [] }]

const projectApi: FastifyPluginAsyncTypebox = async (app) => {
  app.addHook('onRequest', app.authenticate('project-api'))

  app.get('/projects/:project_id/opportunities', {
    schema: { tags, security, summary: listOpportunities.title, description: listOpportunities.description, params: Project, querystring: listOpportunities.input, response: responses(listOpportunities.output) },
  }, (req) => req.operate(listOpportunities, req.query, req.params.project_id))

  app.post('/projects/:project_id/opportunities', {
    schema: { tags, security, summary: submitOpportunity.title, description: submitOpportunity.description, params: Project, body: submitOpportunity.input, response: { ...responses(SubmissionResult), 201: SubmissionResult } },
  }, async (req, reply) => {
    const result = await req.operate(submitOpportunity, req.body, req.params.project_id)
    return reply.code(result.created ? 201 : 200).send(result)
  })

  app.patch('/projects/:project_id/opportunities/:event_id/review', {
    schema: { tags, security, summary: reviewOpportunity.title, description: reviewOpportunity.description, params: ProjectOpportunity, body: ReviewBody, response: responses(reviewOpportunity.output) },
  }, (req) => req.operate(reviewOpportunity, { ...req.body, event_id: req.params.event_id }, req.params.project_id))

  app.get('/projects/:project_id/opportunities/:event_id/history', {
    schema: { tags, security, summary: getReviewHistory.title, description: getReviewHistory.description, params: ProjectOpportunity, response: responses(getReviewHistory.output) },
  }, (req) => req.operate(getReviewHistory, { event_id: req.params.event_id }, req.params.project_id))

  app.get('/projects/:project_id/overview', {
    schema: { tags, security, summary: getOverview.title, description: getOverview.description, params: Project, querystring: getOverview.input, response: responses(getOverview.output) },
  }, (req) => req.operate(getOverview, req.query, req.params.project_id))

  app.get('/projects/:project_id/daily-ops', {
    schema: { tags, security, summary: getDailyOps.title, description: getDailyOps.description, params: Project, querystring: getDailyOps.input, response: responses(getDailyOps.output) },
  }, (req) => req.operate(getDailyOps, req.query, req.params.project_id))

  app.get('/projects/:project_id/daily-event-summary', {
    schema: { tags, security, summary: getDailyEventSummary.title, description: getDailyEventSummary.description, params: Project, querystring: getDailyEventSummary.input, response: responses(getDailyEventSummary.output) },
  }, (req) => req.operate(getDailyEventSummary, req.query, req.params.project_id))

  app.get('/projects/:project_id/event-stream', {
    schema: { tags, security, summary: getEventStream.title, description: getEventStream.description, params: Project, querystring: getEventStream.input, response: responses(getEventStream.output) },
  }, (req) => req.operate(getEventStream, req.query, req.params.project_id))
}

export default projectApi
