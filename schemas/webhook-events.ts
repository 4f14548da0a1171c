// The payload of each webhook event type (Standard Webhooks' envelope {type, timestamp, data}
// with `data` as each emitter writes it): the event-type catalogue of the OpenAPI document's
// top-level `webhooks` map (plugins/openapi.ts). A subscription with `format: "slack"` gets a
// Slack message made from the same payload instead (core/slack.ts).
import { Type, type TSchema } from '@sinclair/typebox'
import { Day, StringEnum, Timestamp } from './atoms.ts'
import { Opportunity, Status, Evaluation } from './opportunities.ts'
import { Memory } from './memories.ts'
import { ProjectCard } from './projects.ts'
import { Comment } from './comments.ts'
import { Webhook, webhookEventTypes, type WebhookEventType } from './webhooks.ts'

const Actor = Type.Object({ id: Type.String({ description: 'The user who made the change.' }) })
const HistoryId = Type.Integer({ description: 'The review history entry of the change.' })
const ReviewState = Type.Object({
  evaluation: Type.Optional(Evaluation),
  status: Type.Optional(Status),
  review_note: Type.Optional(Type.String()),
}, { description: 'The review fields the change touched.' })

const withOpportunity = (extra: Record<string, TSchema>, description: string) =>
  Type.Object({ ...Opportunity.properties, ...extra }, { description })

const NullableNumber = Type.Union([Type.Number(), Type.Null()])
const Change = Type.Object({ value: Type.Number(), previous: Type.Number(), change: NullableNumber })
const Period = Type.Object({ from: Day, to: Day })
const ProjectRefOut = Type.Object({ id: Type.String(), slug: Type.String(), name: Type.String() })

const AlertEvent = (kind: 'triggered' | 'resolved') => Type.Object({
  alert: Type.Object({
    id: Type.String(),
    name: Type.String(),
    metric: Type.String(),
    event: Type.Union([Type.String(), Type.Null()]),
    condition: Type.String(),
    threshold: NullableNumber,
  }),
  id: Type.String({ description: 'The alert event (ale_…).' }),
  kind: Type.Literal(kind),
  day: Day,
  value: Type.Number({ description: 'The metric\'s value that day.' }),
  detail: Type.Object({}, { additionalProperties: true, description: 'What the evaluation compared (threshold, baseline…).' }),
  project: ProjectRefOut,
  at: Timestamp(),
}, { description: `An alert ${kind}.` })

/** `data` of each event type. */
export const webhookEventData: Record<WebhookEventType | 'webhook.test', TSchema> = {
  'opportunity.submitted': Type.Object(Opportunity.properties, { description: 'The opportunity as the REST API returns it.' }),
  'opportunity.reviewed': withOpportunity({ review: Type.Object({ history_id: HistoryId, actor: Actor, before: ReviewState, after: ReviewState }) }, 'The opportunity after the review, and the review.'),
  'opportunity.merged': withOpportunity({ merge: Type.Object({ history_id: HistoryId, actor: Actor, sources: Type.Array(Type.String(), { description: 'The event_ids merged into it.' }) }) }, 'The target after the merge.'),
  'opportunity.unmerged': withOpportunity({ unmerge: Type.Object({ history_id: HistoryId, actor: Actor, target: Type.String({ description: 'The event_id it left.' }) }) }, 'The opportunity as restored.'),
  'opportunity.tagged': withOpportunity({ tagging: Type.Object({ history_id: HistoryId, actor: Actor, before: Type.Object({ tags: Type.Array(Type.String()) }), after: Type.Object({ tags: Type.Array(Type.String()) }) }) }, 'The opportunity after its tags changed.'),
  'opportunity.assigned': withOpportunity({
    assignment: Type.Object({
      history_id: HistoryId,
      actor: Type.Union([Actor, Type.Null()], { description: 'null when the assignee left the project.' }),
      before: Type.Object({ assignee: Type.Union([Type.String(), Type.Null()]) }),
      after: Type.Object({ assignee: Type.Union([Type.String(), Type.Null()]) }),
    }),
  }, 'The opportunity after its assignee was set or cleared (emails or null).'),
  'comment.created': Type.Object(Comment.properties, { description: 'The comment as list_comments answers it.' }),
  'comment.edited': Type.Object(Comment.properties, { description: 'The comment after the edit.' }),
  'comment.deleted': Type.Object(Comment.properties, { description: 'The comment as deleted (body "", deleted true).' }),
  'tag.renamed': Type.Object({ name: Type.String(), previous_name: Type.String(), opportunities: Type.Integer({ description: 'How many opportunities carry it.' }), actor: Actor }),
  'tag.deleted': Type.Object({ name: Type.String(), opportunities: Type.Integer({ description: 'How many opportunities carried it.' }), actor: Actor }),
  'memory.added': Type.Object(Memory.properties, { description: 'The memory.' }),
  'memory.updated': Type.Object(Memory.properties, { description: 'The memory after the change.' }),
  'memory.forgotten': Type.Object(Memory.properties, { description: 'The memory as it was.' }),
  'project.updated': Type.Object(ProjectCard.properties, { description: 'The project card after the change.' }),
  'alert.triggered': AlertEvent('triggered'),
  'alert.resolved': AlertEvent('resolved'),
  'digest.ready': Type.Object({
    project: Type.Object({ ...ProjectRefOut.properties, timezone: Type.String() }),
    frequency: StringEnum(['daily', 'weekly'] as const),
    period: Period,
    previous: Period,
    metrics: Type.Object({
      registrations: Change,
      daily_users: Change,
      events: Type.Array(Type.Object({ event: Type.String(), count: Type.Number(), previous: Type.Number(), change: NullableNumber })),
    }),
    opportunities: Type.Object({
      new: Type.Integer(),
      pending: Type.Integer(),
      adopted: Type.Integer(),
      top_new: Type.Array(Type.Object({ event_id: Type.String(), key_information: Type.String() })),
    }),
    alerts: Type.Array(Type.Object({ id: Type.String(), name: Type.String(), kind: StringEnum(['triggered', 'resolved'] as const), day: Day, value: Type.Number() })),
    generated_at: Timestamp(),
  }, { description: 'A project\'s daily or weekly digest.' }),
  'webhook.test': Type.Object(Webhook.properties, { description: 'test_webhook: the webhook itself.' }),
}

/** The envelope of one event type. */
export const webhookEnvelope = (type: string, data: TSchema) => Type.Object({
  type: Type.Literal(type),
  timestamp: Timestamp('When the event happened (not when it is delivered).'),
  data,
})

/** Every event type a subscription can choose, and webhook.test. */
export const webhookEventCatalogue = [...webhookEventTypes, 'webhook.test'] as const
