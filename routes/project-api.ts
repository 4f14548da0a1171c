// The project-side API (spec 4.1) under /api/v1/mcp: a table of routes, each an operation.
import type { FastifyPluginAsync } from 'fastify'
import { operationRoute, type OperationRoute } from './operation-route.ts'
import listOpportunities from '../tools/list-opportunities.ts'
import reviewOpportunity from '../tools/review-opportunity.ts'
import submitOpportunity from '../tools/submit-opportunity.ts'
import getReviewHistory from '../tools/get-review-history.ts'
import getOpportunity from '../tools/get-opportunity.ts'
import getOverview from '../tools/get-overview.ts'
import getDailyOps from '../tools/get-daily-ops.ts'
import getDailyEventSummary from '../tools/get-daily-event-summary.ts'
import getEventStream from '../tools/get-event-stream.ts'
import getRetention from '../tools/get-retention.ts'
import mergeOpportunities from '../tools/merge-opportunities.ts'
import unmergeOpportunity from '../tools/unmerge-opportunity.ts'
import listMergedOpportunities from '../tools/list-merged-opportunities.ts'
import listComments from '../tools/list-comments.ts'
import addComment from '../tools/add-comment.ts'
import editComment from '../tools/edit-comment.ts'
import deleteComment from '../tools/delete-comment.ts'
import tagOpportunity from '../tools/tag-opportunity.ts'
import assignOpportunity from '../tools/assign-opportunity.ts'
import listTags from '../tools/list-tags.ts'
import renameTag from '../tools/rename-tag.ts'
import deleteTag from '../tools/delete-tag.ts'
import findSimilarOpportunities from '../tools/find-similar-opportunities.ts'
import saveView from '../tools/save-view.ts'
import listSavedViews from '../tools/list-saved-views.ts'
import deleteSavedView from '../tools/delete-saved-view.ts'
import getOpportunityImpact from '../tools/get-opportunity-impact.ts'
import createAlert from '../tools/create-alert.ts'
import listAlerts from '../tools/list-alerts.ts'
import updateAlert from '../tools/update-alert.ts'
import deleteAlert from '../tools/delete-alert.ts'
import listAlertEvents from '../tools/list-alert-events.ts'
import getDigest from '../tools/get-digest.ts'
import setDigest from '../tools/set-digest.ts'
import deleteDigest from '../tools/delete-digest.ts'
import previewDigest from '../tools/preview-digest.ts'
import { dailyEventSummaryCsv, dailyOpsCsv, opportunitiesCsv } from './exports.ts'

const project = 'project_id'
const routes: OperationRoute[] = [
  { method: 'GET', url: '/projects/:project_id/opportunities', op: listOpportunities, project, csv: opportunitiesCsv },
  { method: 'POST', url: '/projects/:project_id/opportunities', op: submitOpportunity, project, status: (r: { created: boolean }) => (r.created ? 201 : 200) },
  { method: 'GET', url: '/projects/:project_id/opportunities/:event_id', op: getOpportunity, project, etag: true },
  { method: 'PATCH', url: '/projects/:project_id/opportunities/:event_id/review', op: reviewOpportunity, project, ifMatch: 'if_version' },
  { method: 'GET', url: '/projects/:project_id/opportunities/:event_id/history', op: getReviewHistory, project },
  { method: 'GET', url: '/projects/:project_id/opportunities/:event_id/impact', op: getOpportunityImpact, project },
  { method: 'POST', url: '/projects/:project_id/opportunities/:event_id/merge', op: mergeOpportunities, project, ifMatch: 'if_version' },
  { method: 'POST', url: '/projects/:project_id/opportunities/:event_id/unmerge', op: unmergeOpportunity, project },
  { method: 'GET', url: '/projects/:project_id/opportunities/:event_id/merged', op: listMergedOpportunities, project },
  // Similar ones to a text or an opportunity (a POST: the text can be 10,000 characters; one route, one operationId).
  { method: 'POST', url: '/projects/:project_id/opportunities/similar', op: findSimilarOpportunities, project },
  { method: 'GET', url: '/projects/:project_id/overview', op: getOverview, project },
  { method: 'GET', url: '/projects/:project_id/daily-ops', op: getDailyOps, project, csv: dailyOpsCsv },
  { method: 'GET', url: '/projects/:project_id/retention', op: getRetention, project },
  { method: 'GET', url: '/projects/:project_id/daily-event-summary', op: getDailyEventSummary, project, csv: dailyEventSummaryCsv },
  { method: 'GET', url: '/projects/:project_id/event-stream', op: getEventStream, project },
  { method: 'GET', url: '/projects/:project_id/opportunities/:event_id/comments', op: listComments, project },
  { method: 'POST', url: '/projects/:project_id/opportunities/:event_id/comments', op: addComment, project, status: 201 },
  { method: 'PATCH', url: '/projects/:project_id/comments/:comment_id', op: editComment, project },
  { method: 'DELETE', url: '/projects/:project_id/comments/:comment_id', op: deleteComment, project },
  { method: 'POST', url: '/projects/:project_id/opportunities/:event_id/tags', op: tagOpportunity, project, ifMatch: 'if_version' },
  { method: 'PUT', url: '/projects/:project_id/opportunities/:event_id/assignee', op: assignOpportunity, project, ifMatch: 'if_version' },
  { method: 'GET', url: '/projects/:project_id/tags', op: listTags, project },
  { method: 'PATCH', url: '/projects/:project_id/tags/:name', op: renameTag, project },
  { method: 'DELETE', url: '/projects/:project_id/tags/:name', op: deleteTag, project },
  { method: 'GET', url: '/projects/:project_id/views', op: listSavedViews, project },
  { method: 'POST', url: '/projects/:project_id/views', op: saveView, project, status: (r: { created: boolean }) => (r.created ? 201 : 200) },
  { method: 'DELETE', url: '/projects/:project_id/views/:view_id', op: deleteSavedView, project },
  { method: 'GET', url: '/projects/:project_id/alerts', op: listAlerts, project },
  { method: 'POST', url: '/projects/:project_id/alerts', op: createAlert, project, status: 201 },
  // Before /alerts/:alert_id in the reader's eye; the router prefers the static segment anyway.
  { method: 'GET', url: '/projects/:project_id/alerts/events', op: listAlertEvents, project },
  { method: 'PATCH', url: '/projects/:project_id/alerts/:alert_id', op: updateAlert, project },
  { method: 'DELETE', url: '/projects/:project_id/alerts/:alert_id', op: deleteAlert, project },
  { method: 'GET', url: '/projects/:project_id/digest', op: getDigest, project },
  { method: 'PUT', url: '/projects/:project_id/digest', op: setDigest, project, status: (r: { created: boolean }) => (r.created ? 201 : 200) },
  { method: 'DELETE', url: '/projects/:project_id/digest', op: deleteDigest, project },
  { method: 'GET', url: '/projects/:project_id/digest/preview', op: previewDigest, project },
]

const projectApi: FastifyPluginAsync = async (app) => {
  app.addHook('onRequest', app.authenticate('project-api'))
  for (const route of routes) operationRoute(app, { surface: 'project-api', tag: 'project-side API' }, route)
}

export default projectApi
