// The built-in tools: the first tool plugin (plugins/tool-plugins.ts loads it before any other).
// A new tool is one file in this folder and one line in the list below; a tool from outside
// the repository is a plugin of its own (docs/extending.md).
import type { Operation, ToolPlugin } from '../core/operations.ts'
import discoverTools from './discover-tools.ts'
import searchSignals from './search-signals.ts'
import listOpportunities from './list-opportunities.ts'
import exportOpportunities from './export-opportunities.ts'
import reviewOpportunity from './review-opportunity.ts'
import reviewOpportunities from './review-opportunities.ts'
import reviewOpportunityFromView from './review-opportunity-from-view.ts'
import submitOpportunity from './submit-opportunity.ts'
import getReviewHistory from './get-review-history.ts'
import getOpportunity from './get-opportunity.ts'
import getOverview from './get-overview.ts'
import getDailyOps from './get-daily-ops.ts'
import getDailyEventSummary from './get-daily-event-summary.ts'
import getEventStream from './get-event-stream.ts'
import listProjects from './list-projects.ts'
import createProject from './create-project.ts'
import getProject from './get-project.ts'
import updateProject from './update-project.ts'
import listMemories from './list-memories.ts'
import addMemory from './add-memory.ts'
import updateMemory from './update-memory.ts'
import forgetMemory from './forget-memory.ts'
import ingestEvents from './ingest-events.ts'
import { listWorkspaceTools, setToolEnabled } from './workspace-tools.ts'
import createKey from './create-key.ts'
import revokeKey from './revoke-key.ts'
import createWebhook from './create-webhook.ts'
import listWebhooks from './list-webhooks.ts'
import getWebhook from './get-webhook.ts'
import updateWebhook from './update-webhook.ts'
import deleteWebhook from './delete-webhook.ts'
import rotateWebhookSecret from './rotate-webhook-secret.ts'
import testWebhook from './test-webhook.ts'
import listWebhookDeliveries from './list-webhook-deliveries.ts'
import redeliverWebhook from './redeliver-webhook.ts'
import replayWebhook from './replay-webhook.ts'
import createPasswordReset from './create-password-reset.ts'
import listMembers from './list-members.ts'
import inviteMember from './invite-member.ts'
import updateMember from './update-member.ts'
import removeMember from './remove-member.ts'
import cancelInvitation from './cancel-invitation.ts'
import mergeOpportunities from './merge-opportunities.ts'
import unmergeOpportunity from './unmerge-opportunity.ts'
import listMergedOpportunities from './list-merged-opportunities.ts'
import listComments from './list-comments.ts'
import addComment from './add-comment.ts'
import editComment from './edit-comment.ts'
import deleteComment from './delete-comment.ts'
import tagOpportunity from './tag-opportunity.ts'
import listTags from './list-tags.ts'
import renameTag from './rename-tag.ts'
import deleteTag from './delete-tag.ts'
import assignOpportunity from './assign-opportunity.ts'
import findSimilarOpportunities from './find-similar-opportunities.ts'
import saveView from './save-view.ts'
import listSavedViews from './list-saved-views.ts'
import deleteSavedView from './delete-saved-view.ts'
import getOpportunityImpact from './get-opportunity-impact.ts'
import getRetention from './get-retention.ts'
import createAlert from './create-alert.ts'
import listAlerts from './list-alerts.ts'
import updateAlert from './update-alert.ts'
import deleteAlert from './delete-alert.ts'
import listAlertEvents from './list-alert-events.ts'
import getDigest from './get-digest.ts'
import setDigest from './set-digest.ts'
import deleteDigest from './delete-digest.ts'
import previewDigest from './preview-digest.ts'

export const operations: Operation[] = [
  discoverTools,
  searchSignals,
  listOpportunities,
  getOpportunity,
  exportOpportunities,
  reviewOpportunity,
  reviewOpportunities,
  reviewOpportunityFromView,
  submitOpportunity,
  getReviewHistory,
  getOverview,
  getDailyOps,
  getDailyEventSummary,
  getEventStream,
  listProjects,
  createProject,
  getProject,
  updateProject,
  listMemories,
  addMemory,
  updateMemory,
  forgetMemory,
  ingestEvents,
  listWorkspaceTools,
  setToolEnabled,
  createKey,
  revokeKey,
  createWebhook,
  listWebhooks,
  getWebhook,
  updateWebhook,
  deleteWebhook,
  rotateWebhookSecret,
  testWebhook,
  listWebhookDeliveries,
  redeliverWebhook,
  replayWebhook,
  createPasswordReset,
  listMembers,
  inviteMember,
  updateMember,
  removeMember,
  cancelInvitation,
  // Triage (issue 28): merges. merge_opportunities before unmerge_opportunity: the latter's example unmerges what the former's merged.
  mergeOpportunities,
  unmergeOpportunity,
  listMergedOpportunities,
  listComments,
  addComment,
  editComment,
  deleteComment,
  tagOpportunity,
  listTags,
  renameTag,
  deleteTag,
  assignOpportunity,
  findSimilarOpportunities,
  saveView,
  listSavedViews,
  deleteSavedView,
  // Metrics (issue 29), in a toolset of their own.
  getRetention,
  getOpportunityImpact,
  // Metrics (issue 29): alerts on a daily metric or the review queue.
  createAlert,
  listAlerts,
  updateAlert,
  deleteAlert,
  listAlertEvents,
  // Digests: set_digest before delete_digest, whose example then deletes what the former set.
  getDigest,
  setDigest,
  previewDigest,
  deleteDigest,
]

const builtinTools: ToolPlugin = async (app) => {
  for (const op of operations) app.operations.add(op)
}
// The name a start-up error gives it (Fastify's display name of a plugin).
Object.assign(builtinTools, { [Symbol.for('fastify.display-name')]: 'growthdesk built-in tools' })
export default builtinTools
