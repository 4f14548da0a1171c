// Tables of growthdesk. Public ids are prefixed text (prj_, opp_, mem_, key_ …);
// rollup tables are maintained at ingestion so metrics never scan raw events.
import { sql, bigint, bigserial, boolean, check, customType, date, doublePrecision, index, integer, json, jsonb, pgTable, primaryKey, smallint, text, timestamp, uniqueIndex, uuid, type AnyPgColumn } from './orm.ts'

import { evaluations, statuses } from '../schemas/opportunities.ts'

/** A CHECK that a text column holds one of the wire values (the enum drizzle types it with). */
const oneOf = (name: string, column: string, values: readonly string[]) =>
  check(name, sql.raw(`"${column}" in (${values.map((v) => `'${v}'`).join(', ')})`))

const createdAt = () => timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow()
const tstz = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' })

export const workspaces = pgTable('workspaces', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  disabledTools: text('disabled_tools').array().notNull().default(sql`'{}'::text[]`),
  createdAt: createdAt(),
})

export const users = pgTable('users', {
  id: text('id').primaryKey(),
  workspaceId: text('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  email: text('email').notNull(),
  passwordHash: text('password_hash').notNull(),
  /** Workspace owners manage workspace settings (enabled tools); project roles are in memberships. */
  workspaceRole: text('workspace_role', { enum: ['owner', 'member'] }).notNull().default('member'),
  createdAt: createdAt(),
  /**
   * Set when an owner removed the user from the workspace: they sign in nowhere and act nowhere
   * (their memberships, sessions, keys and grants went in the same transaction). The row stays,
   * so what they did keeps its author; an invitation to the same email brings the account back.
   */
  removedAt: tstz('removed_at'),
  /** When the password was last set (by a change, a reset or an invitation's acceptance). */
  passwordChangedAt: tstz('password_changed_at'),
}, (t) => [uniqueIndex('users_email_key').on(t.email), index('users_workspace_idx').on(t.workspaceId)])

export const projects = pgTable('projects', {
  id: text('id').primaryKey(),
  workspaceId: text('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  slug: text('slug').notNull(),
  name: text('name').notNull(),
  description: text('description').notNull().default(''),
  website: text('website').notNull().default(''),
  audience: text('audience').notNull().default(''),
  valueProposition: text('value_proposition').notNull().default(''),
  goals: text('goals').array().notNull().default(sql`'{}'::text[]`),
  channels: text('channels').array().notNull().default(sql`'{}'::text[]`),
  stage: text('stage').notNull().default(''),
  timezone: text('timezone').notNull().default('UTC'),
  /** A compact internal number for the project, which leads the large event indexes (4 bytes, not a text id). */
  seq: integer('seq').generatedAlwaysAsIdentity().notNull(),
  createdAt: createdAt(),
  updatedAt: tstz('updated_at').notNull().defaultNow(),
}, (t) => [uniqueIndex('projects_workspace_slug_key').on(t.workspaceId, t.slug), uniqueIndex('projects_seq_key').on(t.seq)])

export const memberships = pgTable('memberships', {
  userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  projectId: text('project_id').notNull().references(() => projects.id, { onDelete: 'cascade' }),
  role: text('role', { enum: ['viewer', 'reviewer', 'owner'] }).notNull(),
  /** The user's identity in the project's event data; null = the user's email. */
  distinctId: text('distinct_id'),
  createdAt: createdAt(),
}, (t) => [primaryKey({ columns: [t.userId, t.projectId] }), index('memberships_project_idx').on(t.projectId)])

export const apiKeys = pgTable('api_keys', {
  id: text('id').primaryKey(),
  workspaceId: text('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  kind: text('kind', { enum: ['mcp', 'service', 'ingest', 'oauth'] }).notNull(),
  name: text('name').notNull().default(''),
  /** SHA-256 of the whole key, hex. The key itself is never stored. */
  hash: text('hash').notNull(),
  /** Prefix and last four characters, for display. */
  display: text('display').notNull(),
  /** Narrows the key to one project (always set for ingest keys). */
  projectId: text('project_id').references(() => projects.id, { onDelete: 'cascade' }),
  readOnly: boolean('read_only').notNull().default(false),
  createdAt: createdAt(),
  lastUsedAt: tstz('last_used_at'),
  expiresAt: tstz('expires_at'),
  revokedAt: tstz('revoked_at'),
  /** OAuth access tokens belong to the grant (client + user) they were issued under. */
  grantId: text('grant_id'),
}, (t) => [uniqueIndex('api_keys_hash_key').on(t.hash), index('api_keys_user_idx').on(t.userId), index('api_keys_grant_idx').on(t.grantId)])

export const opportunities = pgTable('opportunities', {
  id: text('id').primaryKey(),
  projectId: text('project_id').notNull().references(() => projects.id, { onDelete: 'cascade' }),
  contributionType: text('contribution_type').notNull(),
  keyInformation: text('key_information').notNull(),
  reason: text('reason').notNull(),
  suggestedAction: text('suggested_action').notNull(),
  sourceUrl: text('source_url'),
  externalId: text('external_id'),
  submittedBy: text('submitted_by').references(() => users.id, { onDelete: 'set null' }),
  receivedAt: tstz('received_at').notNull().defaultNow(),
  evaluation: text('evaluation', { enum: evaluations }).notNull().default(''),
  status: text('status', { enum: statuses }).notNull().default('pending'),
  reviewNote: text('review_note').notNull().default(''),
  reviewUpdatedAt: tstz('review_updated_at'),
  /** Bumped by the UPDATE of every change, in that same statement: the opportunity's ETag, and what `if_version` is compared with. */
  version: integer('version').notNull().default(1),
  /** How many reports this opportunity stands for: 1, plus one for each opportunity merged into it. */
  reportCount: integer('report_count').notNull().default(1),
  /** Set while this opportunity is merged into another: it then leaves listings, counts and similarity, and is otherwise kept as it was (unmerge clears it). */
  mergedInto: text('merged_into').references((): AnyPgColumn => opportunities.id, { onDelete: 'set null' }),
  mergedAt: tstz('merged_at'),
  mergedBy: text('merged_by').references(() => users.id, { onDelete: 'set null' }),
  /** The member it is given to (a member of the project). */
  assigneeUserId: text('assignee_user_id').references(() => users.id, { onDelete: 'set null' }),
  /**
   * The MinHash bands of key_information's words, each tied to the project (a function in
   * db/migrations/0017_similarity_bands.sql): the candidates of similarity are the opportunities
   * sharing a band with a text (see similarIn). Computed by PostgreSQL at insert.
   */
  similarityBands: integer('similarity_bands').array().notNull().generatedAlwaysAs(sql`opportunity_similarity_bands(project_id, key_information)`),
}, (t) => [
  uniqueIndex('opportunities_external_key').on(t.projectId, t.externalId),
  index('opportunities_recent_idx').on(t.projectId, t.receivedAt.desc().nullsFirst(), t.id),
  index('opportunities_status_idx').on(t.projectId, t.status, t.receivedAt.desc().nullsFirst(), t.id),
  index('opportunities_type_idx').on(t.projectId, t.contributionType, t.receivedAt.desc().nullsFirst(), t.id),
  // The board's most common pair of filters, status and type, served in order by one index.
  index('opportunities_status_type_idx').on(t.projectId, t.status, t.contributionType, t.receivedAt.desc().nullsFirst(), t.id),
  index('opportunities_evaluation_idx').on(t.projectId, t.evaluation, t.receivedAt.desc().nullsFirst(), t.id),
  index('opportunities_assignee_idx').on(t.projectId, t.assigneeUserId, t.receivedAt.desc().nullsFirst(), t.id),
  index('opportunities_merged_into_idx').on(t.mergedInto).where(sql`${t.mergedInto} is not null`),
  // The similarity candidates: the opportunities sharing a MinHash band with a text (`&&`).
  index('opportunities_similarity_bands_idx').using('gin', t.similarityBands).with({ fastupdate: 'off' }),
  oneOf('opportunities_status_check', 'status', statuses),
  oneOf('opportunities_evaluation_check', 'evaluation', evaluations),
  check('opportunities_report_count_check', sql`${t.reportCount} >= 1`),
  check('opportunities_not_merged_into_itself', sql`${t.mergedInto} <> ${t.id}`),
])

/** A project's tags: created on first use, renamed and deleted by name; a name is unique in its project, any case. */
export const tags = pgTable('tags', {
  id: text('id').primaryKey(),
  projectId: text('project_id').notNull().references(() => projects.id, { onDelete: 'cascade' }),
  name: text('name').notNull(),
  createdAt: createdAt(),
}, (t) => [uniqueIndex('tags_project_name_key').on(t.projectId, sql`lower(${t.name})`)])

/**
 * Which opportunity carries which tag. `project_id` and `received_at` are copies of the
 * opportunity's (which never change), so a listing filtered by a tag reads one index range in
 * listing order.
 */
export const opportunityTags = pgTable('opportunity_tags', {
  opportunityId: text('opportunity_id').notNull().references(() => opportunities.id, { onDelete: 'cascade' }),
  tagId: text('tag_id').notNull().references(() => tags.id, { onDelete: 'cascade' }),
  projectId: text('project_id').notNull().references(() => projects.id, { onDelete: 'cascade' }),
  receivedAt: tstz('received_at').notNull(),
}, (t) => [
  primaryKey({ columns: [t.opportunityId, t.tagId] }),
  index('opportunity_tags_listing_idx').on(t.tagId, t.receivedAt.desc().nullsFirst(), t.opportunityId),
])

/** Threaded comments on an opportunity; edited and deleted by their author. */
export const comments = pgTable('comments', {
  id: text('id').primaryKey(),
  projectId: text('project_id').notNull().references(() => projects.id, { onDelete: 'cascade' }),
  opportunityId: text('opportunity_id').notNull().references(() => opportunities.id, { onDelete: 'cascade' }),
  /** The comment this one answers (null: a top-level comment). */
  parentId: text('parent_id').references((): AnyPgColumn => comments.id, { onDelete: 'cascade' }),
  authorUserId: text('author_user_id').references(() => users.id, { onDelete: 'set null' }),
  body: text('body').notNull(),
  createdAt: createdAt(),
  editedAt: tstz('edited_at'),
  /** Set when its author deleted it: the text is gone, its place in the thread (and its answers) stay. */
  deletedAt: tstz('deleted_at'),
}, (t) => [
  index('comments_opportunity_idx').on(t.opportunityId, t.createdAt, t.id),
  check('comments_body_length', sql`char_length(${t.body}) <= 4000`),
])

/** A user's named set of listing filters in a project, optionally shared with the project. */
export const savedViews = pgTable('saved_views', {
  id: text('id').primaryKey(),
  projectId: text('project_id').notNull().references(() => projects.id, { onDelete: 'cascade' }),
  userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  name: text('name').notNull(),
  /** The listing's filters as list_opportunities takes them (no page, page_size or cursor). */
  filters: jsonb('filters').notNull(),
  shared: boolean('shared').notNull().default(false),
  createdAt: createdAt(),
  updatedAt: tstz('updated_at').notNull().defaultNow(),
}, (t) => [uniqueIndex('saved_views_owner_name_key').on(t.projectId, t.userId, sql`lower(${t.name})`)])

/** Exact per-bucket totals, kept by a trigger on opportunities (see the custom migration). */
export const opportunityCounts = pgTable('opportunity_counts', {
  projectId: text('project_id').notNull().references(() => projects.id, { onDelete: 'cascade' }),
  contributionType: text('contribution_type').notNull(),
  status: text('status', { enum: statuses }).notNull(),
  evaluation: text('evaluation', { enum: evaluations }).notNull(),
  n: bigint('n', { mode: 'number' }).notNull(),
}, (t) => [
  primaryKey({ columns: [t.projectId, t.contributionType, t.status, t.evaluation] }),
  oneOf('opportunity_counts_status_check', 'status', statuses),
  oneOf('opportunity_counts_evaluation_check', 'evaluation', evaluations),
])

export const reviewHistory = pgTable('review_history', {
  id: bigserial('id', { mode: 'number' }).primaryKey(),
  opportunityId: text('opportunity_id').notNull().references(() => opportunities.id, { onDelete: 'cascade' }),
  actorUserId: text('actor_user_id').references(() => users.id, { onDelete: 'set null' }),
  changedAt: tstz('changed_at').notNull().defaultNow(),
  /** What changed: a review, or a merge, unmerge, assignment, tagging or comment (see get_review_history). */
  action: text('action').notNull().default('review'),
  before: jsonb('before').notNull(),
  after: jsonb('after').notNull(),
}, (t) => [index('review_history_opportunity_idx').on(t.opportunityId, t.id)])

/**
 * Raw events, partitioned by RANGE of `day`, one partition a calendar month (events_yYYYYmMM),
 * which migration 0020 declares and events_ensure_partitions() creates (docs/design.md, "Events
 * partitioned by day ranges"); EVENTS_RETENTION_DAYS drops whole months. drizzle sees one table.
 */
export const events = pgTable('events', {
  /** The event stream's cursor; unique by the sequence (the key must hold the partition key). */
  id: bigserial('id', { mode: 'number' }).notNull(),
  // No foreign key on the two tables ingestion writes a row into per event (a per-row check cost
  // ~15 % of ingestion, issue 14): the ingest statement takes project_id from the project row it
  // holds a share lock on, and a project's deletion deletes these rows by the trigger of
  // migration 0010 (projects_delete_event_rows), as ON DELETE CASCADE did.
  projectId: text('project_id').notNull(),
  /** projects.seq of project_id, written by the ingest statement from the project row it locks. */
  projectSeq: integer('project_seq').notNull(),
  uuid: uuid('uuid').notNull(),
  event: text('event').notNull(),
  distinctId: text('distinct_id').notNull(),
  occurredAt: tstz('occurred_at').notNull(),
  /** Calendar day of occurred_at in the project's time zone at ingestion. */
  day: date('day', { mode: 'string' }).notNull(),
  properties: jsonb('properties').notNull().default(sql`'{}'::jsonb`),
  receivedAt: tstz('received_at').notNull().defaultNow(),
}, (t) => [
  // The two indexes every new event is written into, so kept small: they lead with the project's
  // 4-byte seq rather than its text id (docs/design.md, "Ingestion without hot spots").
  primaryKey({ name: 'events_id_day_pk', columns: [t.id, t.day] }),
  // Idempotency by uuid (DESIGN §5): random uuids land anywhere in this index. A partitioned
  // table's unique index holds the partition key: the same uuid on the same day is one event.
  uniqueIndex('events_uuid_key').on(t.projectSeq, t.uuid, t.day),
  // Leads with the day, so a batch of new events touches the few index pages of recent days
  // instead of random pages of the whole index (200 k users). The event stream reads it day by
  // day, newest first (events repository, stream()).
  index('events_day_stream_idx').on(t.projectSeq, t.day, t.distinctId, t.occurredAt.desc().nullsFirst(), t.id.desc().nullsFirst()),
])

/** First sighting of a user doing an event on a day: the source of exact unique counts. */
export const dailyEventUsers = pgTable('daily_event_users', {
  /** No foreign key, as for events (see there). */
  projectId: text('project_id').notNull(),
  event: text('event').notNull(),
  day: date('day', { mode: 'string' }).notNull(),
  distinctId: text('distinct_id').notNull(),
  /**
   * The retention_queue row (its id) of the batch that inserted this row, null for rows written
   * otherwise (a rebuild, a bulk load): retention_apply() counts a row as applied once its batch
   * is no longer queued (migration 0022).
   */
  batch: bigint('batch', { mode: 'number' }),
}, (t) => [
  primaryKey({ columns: [t.projectId, t.event, t.day, t.distinctId] }),
  // One user's rows (what retention_apply reads for the users of what it applies).
  index('daily_event_users_user_idx').on(t.projectId, t.distinctId, t.event, t.day),
])

/**
 * Retention (issue 29), answered from cells kept exact as events arrive. The ingest statement
 * queues each batch's first sightings (its new daily_event_users rows) as ONE row of arrays, and
 * marks those rows with that queue row's id (daily_event_users.batch; migration 0022: one row a
 * batch instead of one a first sighting); retention_apply() takes queued rows of a project in
 * order, one caller at a time per project, and adds what they change to the cells: for each user
 * and start event A (first day f = the user's least day of A), one user in the day cell
 * (A, B, f, d − f) for each day d ≥ f they did B, in the week cell (A, B, week of f, weeks from
 * it) for each week with such a day, and in the cohort (A, f). A read applies what is queued,
 * then sums a few cells: its cost is the cohorts and periods asked for, not the users in them.
 * No foreign keys, as for daily_event_users.
 */
export const retentionQueue = pgTable('retention_queue', {
  projectId: text('project_id').notNull(),
  id: bigint('id', { mode: 'number' }).generatedAlwaysAsIdentity().notNull(),
  /** The batch's first sightings: events[i], days[i], distinct_ids[i]. */
  events: text('events').array().notNull(),
  days: date('days', { mode: 'string' }).array().notNull(),
  distinctIds: text('distinct_ids').array().notNull(),
}, (t) => [primaryKey({ columns: [t.projectId, t.id] })])

export const retentionCells = pgTable('retention_cells', {
  projectId: text('project_id').notNull(),
  startEvent: text('start_event').notNull(),
  returnEvent: text('return_event').notNull(),
  grain: text('grain', { enum: ['day', 'week'] }).notNull(),
  /** The cohort's first day (day grain) or the Monday of its week (week grain). */
  cohort: date('cohort', { mode: 'string' }).notNull(),
  /** Periods after the cohort's own (0 = the cohort's day or week). */
  k: integer('k').notNull(),
  users: bigint('users', { mode: 'number' }).notNull(),
}, (t) => [primaryKey({ columns: [t.projectId, t.startEvent, t.returnEvent, t.grain, t.cohort, t.k] })])

/** How many users had their first day of `event` on `day` (a week's cohort is the sum of its days). */
export const retentionCohorts = pgTable('retention_cohorts', {
  projectId: text('project_id').notNull(),
  event: text('event').notNull(),
  day: date('day', { mode: 'string' }).notNull(),
  users: bigint('users', { mode: 'number' }).notNull(),
}, (t) => [primaryKey({ columns: [t.projectId, t.event, t.day] })])

/**
 * Sharded counters: every batch adds to today's rows, and a row it updated stays locked until
 * its commit. Each database connection adds to its own shard (its backend pid modulo
 * COUNTER_SHARDS), so concurrent batches do not queue behind each other; readers sum the shards.
 */
export const COUNTER_SHARDS = 16
/**
 * The shard a finished day's rows are folded into (fold_counter_shards, migration 0021), which
 * ingestion never writes: a folded day is one row per (day, event) however many shards wrote it.
 */
export const FOLDED_SHARD = -1

export const dailyEventCounts = pgTable('daily_event_counts', {
  projectId: text('project_id').notNull().references(() => projects.id, { onDelete: 'cascade' }),
  day: date('day', { mode: 'string' }).notNull(),
  event: text('event').notNull(),
  shard: smallint('shard').notNull().default(0),
  events: bigint('events', { mode: 'number' }).notNull(),
  uniqueUsers: bigint('unique_users', { mode: 'number' }).notNull(),
}, (t) => [
  primaryKey({ columns: [t.projectId, t.day, t.event, t.shard] }),
  // Only the rows not folded yet (today's, late events'): where the fold finds its work.
  index('daily_event_counts_unfolded_idx').on(t.projectId, t.day).where(sql`shard <> -1`),
])

/** Each user's last day of `daily_use`: 7- and 30-day unique active users without scanning days. */
export const userActivity = pgTable('user_activity', {
  /** No foreign key (migration 0022: a check per new user), as for events (see there). */
  projectId: text('project_id').notNull(),
  distinctId: text('distinct_id').notNull(),
  lastActiveDay: date('last_active_day', { mode: 'string' }).notNull(),
}, (t) => [
  // No index on last_active_day (migration 0009 dropped it): the counts read user_activity_days,
  // and a move of a user's day is then a HOT update that touches no index.
  primaryKey({ columns: [t.projectId, t.distinctId] }),
])

/**
 * How many users have each day as their last day of `daily_use` (user_activity.last_active_day),
 * kept exact by statement-level triggers on user_activity (migration 0009), sharded like
 * daily_event_counts: the users active since a day are a sum over the days since, not a count
 * of users. A shard row may go negative (a user moved on from a day in another shard); sums are exact.
 */
export const userActivityDays = pgTable('user_activity_days', {
  projectId: text('project_id').notNull().references(() => projects.id, { onDelete: 'cascade' }),
  day: date('day', { mode: 'string' }).notNull(),
  shard: smallint('shard').notNull().default(0),
  users: bigint('users', { mode: 'number' }).notNull(),
}, (t) => [
  primaryKey({ columns: [t.projectId, t.day, t.shard] }),
  index('user_activity_days_unfolded_idx').on(t.projectId, t.day).where(sql`shard <> -1`),
])

/** Latest event time and event total per project, sharded like daily_event_counts. */
export const projectEventStats = pgTable('project_event_stats', {
  projectId: text('project_id').notNull().references(() => projects.id, { onDelete: 'cascade' }),
  shard: smallint('shard').notNull().default(0),
  lastEventAt: tstz('last_event_at').notNull(),
  events: bigint('events', { mode: 'number' }).notNull(),
}, (t) => [primaryKey({ columns: [t.projectId, t.shard] })])

export const memories = pgTable('memories', {
  id: text('id').primaryKey(),
  projectId: text('project_id').notNull().references(() => projects.id, { onDelete: 'cascade' }),
  content: text('content').notNull(),
  tags: text('tags').array().notNull().default(sql`'{}'::text[]`),
  source: text('source').notNull().default(''),
  createdBy: text('created_by').references(() => users.id, { onDelete: 'set null' }),
  createdAt: createdAt(),
  updatedAt: tstz('updated_at').notNull().defaultNow(),
}, (t) => [index('memories_project_idx').on(t.projectId, t.createdAt.desc().nullsFirst(), t.id)])

/** Console sign-in sessions (@fastify/session store), stored under the SHA-256 of their id. */
export const sessions = pgTable('sessions', {
  sid: text('sid').primaryKey(),
  data: jsonb('data').notNull(),
  expiresAt: tstz('expires_at').notNull(),
  /** The signed-in user (data.userId, as a column: a user's sessions are listed and ended by it). */
  userId: text('user_id').references(() => users.id, { onDelete: 'cascade' }),
  createdAt: createdAt(),
  /** Written by every save of the session (a rolling session is saved by every request). */
  lastSeenAt: tstz('last_seen_at').notNull().defaultNow(),
}, (t) => [index('sessions_expires_idx').on(t.expiresAt), index('sessions_user_idx').on(t.userId)])

/**
 * An invitation to join a workspace, by email, with a role in each of its projects
 * (invitation_projects). The link carries a token of which only the SHA-256 is kept; it works
 * once (accepted_at), until expires_at, unless cancelled. One pending invitation per email and
 * workspace: inviting again replaces it.
 */
export const invitations = pgTable('invitations', {
  id: text('id').primaryKey(),
  workspaceId: text('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  email: text('email').notNull(),
  tokenHash: text('token_hash').notNull(),
  invitedBy: text('invited_by').references(() => users.id, { onDelete: 'set null' }),
  createdAt: createdAt(),
  expiresAt: tstz('expires_at').notNull(),
  acceptedAt: tstz('accepted_at'),
  acceptedBy: text('accepted_by').references(() => users.id, { onDelete: 'set null' }),
  cancelledAt: tstz('cancelled_at'),
}, (t) => [
  uniqueIndex('invitations_token_key').on(t.tokenHash),
  uniqueIndex('invitations_pending_key').on(t.workspaceId, t.email).where(sql`accepted_at is null and cancelled_at is null`),
  index('invitations_workspace_idx').on(t.workspaceId, t.createdAt),
])

/** The role an invitation gives in each project (gone with the project). */
export const invitationProjects = pgTable('invitation_projects', {
  invitationId: text('invitation_id').notNull().references(() => invitations.id, { onDelete: 'cascade' }),
  projectId: text('project_id').notNull().references(() => projects.id, { onDelete: 'cascade' }),
  role: text('role', { enum: ['viewer', 'reviewer', 'owner'] }).notNull(),
}, (t) => [primaryKey({ columns: [t.invitationId, t.projectId] }), index('invitation_projects_project_idx').on(t.projectId), oneOf('invitation_projects_role_check', 'role', ['viewer', 'reviewer', 'owner'])])

/**
 * A single-use link that sets a user's password: issued by an owner, by the operator
 * (`growthdesk admin reset-password`) or by "Forgot password?" with mail. Only the token's
 * SHA-256 is kept; a password set by any way spends every link of the user still open.
 */
export const passwordResets = pgTable('password_resets', {
  tokenHash: text('token_hash').primaryKey(),
  userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  /** Who issued it; null for the operator or the user themselves (forgot password). */
  createdBy: text('created_by').references(() => users.id, { onDelete: 'set null' }),
  createdAt: createdAt(),
  expiresAt: tstz('expires_at').notNull(),
  usedAt: tstz('used_at'),
}, (t) => [index('password_resets_user_idx').on(t.userId)])

/**
 * A CHECK that a column holds only values sealed under the server key (db/secret-box.ts:
 * `enc:v1:<key id>:…`). Migration 0013 adds these NOT VALID (rows from before were plaintext
 * until the next start sealed them), and the start validates them once nothing is plaintext.
 */
const sealed = (name: string, condition: string) => check(name, sql.raw(condition))

/** Secrets the service makes for itself on first start (e.g. the cookie signing secret), sealed. */
export const appSecrets = pgTable('app_secrets', {
  name: text('name').primaryKey(),
  value: text('value').notNull(),
  createdAt: createdAt(),
}, () => [sealed('app_secrets_value_sealed_check', '"value" like \'enc:%\'')])

/**
 * Fair-use counters shared by every instance on one database: hits of a rate-limit key in a
 * fixed window (epoch ms of its start). Unlogged: a counter lost in a crash costs nothing.
 */
export const rateLimitHits = pgTable('rate_limit_hits', {
  key: text('key').notNull(),
  windowStart: bigint('window_start', { mode: 'number' }).notNull(),
  hits: integer('hits').notNull(),
}, (t) => [primaryKey({ columns: [t.key, t.windowStart] })])

/** PostgreSQL's pg_lsn (a WAL position), read and written as its text form `16/B374D848`. */
const pgLsn = customType<{ data: string }>({ dataType: () => 'pg_lsn' })

/**
 * Read-your-writes with read replicas (db/replicas.ts): per caller that wrote (`key:<keyId>`,
 * `user:<userId>`), the primary's WAL insert position after its latest write; its reads go to a
 * replica only once that replica has replayed past it. Unlogged, as rate_limit_hits: no WAL per
 * mark, and a crash of the primary empties it (docs/design.md says what that costs).
 */
export const readMarks = pgTable('read_marks', {
  reader: text('reader').primaryKey(),
  lsn: pgLsn('lsn').notNull(),
  at: timestamp('at', { withTimezone: true }).notNull().defaultNow(),
})

/** OAuth clients registered dynamically (RFC 7591). */
export const oauthClients = pgTable('oauth_clients', {
  id: text('id').primaryKey(),
  secretHash: text('secret_hash'),
  name: text('name').notNull(),
  redirectUris: text('redirect_uris').array().notNull(),
  authMethod: text('auth_method', { enum: ['none', 'client_secret_post', 'client_secret_basic'] }).notNull(),
  createdAt: createdAt(),
})

/** A user's consent for a client: the tokens issued under it live and die with it. */
export const oauthGrants = pgTable('oauth_grants', {
  id: text('id').primaryKey(),
  clientId: text('client_id').notNull().references(() => oauthClients.id, { onDelete: 'cascade' }),
  userId: text('user_id').notNull().references(() => users.id, { onDelete: 'cascade' }),
  workspaceId: text('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  resource: text('resource').notNull(),
  scope: text('scope').notNull(),
  createdAt: createdAt(),
  revokedAt: tstz('revoked_at'),
}, (t) => [index('oauth_grants_user_idx').on(t.userId)])

export const oauthCodes = pgTable('oauth_codes', {
  hash: text('hash').primaryKey(),
  grantId: text('grant_id').notNull().references(() => oauthGrants.id, { onDelete: 'cascade' }),
  redirectUri: text('redirect_uri').notNull(),
  codeChallenge: text('code_challenge').notNull(),
  expiresAt: tstz('expires_at').notNull(),
  usedAt: tstz('used_at'),
})

export const oauthRefreshTokens = pgTable('oauth_refresh_tokens', {
  hash: text('hash').primaryKey(),
  grantId: text('grant_id').notNull().references(() => oauthGrants.id, { onDelete: 'cascade' }),
  createdAt: createdAt(),
  expiresAt: tstz('expires_at').notNull(),
  /** Set when rotated: presenting it again means it leaked, and the grant is revoked. */
  usedAt: tstz('used_at'),
}, (t) => [index('oauth_refresh_grant_idx').on(t.grantId)])

/** Outgoing webhook subscriptions of a project (Standard Webhooks; the secret is `whsec_…`, stored sealed). */
export const webhooks = pgTable('webhooks', {
  id: text('id').primaryKey(),
  workspaceId: text('workspace_id').notNull().references(() => workspaces.id, { onDelete: 'cascade' }),
  projectId: text('project_id').notNull().references(() => projects.id, { onDelete: 'cascade' }),
  url: text('url').notNull(),
  events: text('events').array().notNull(),
  description: text('description').notNull().default(''),
  /** The signing secret (whsec_…), sealed under the server key for this webhook (db/secret-box.ts). */
  secret: text('secret').notNull(),
  /** The secret before the last rotation, sealed: it signs beside the new one until previous_secret_until. */
  previousSecret: text('previous_secret'),
  previousSecretUntil: tstz('previous_secret_until'),
  enabled: boolean('enabled').notNull().default(true),
  /** Set after repeated failed deliveries; cleared by the next success. */
  failing: boolean('failing').notNull().default(false),
  consecutiveFailures: integer('consecutive_failures').notNull().default(0),
  /** 'standard': the Standard Webhooks JSON envelope; 'slack': a Slack incoming-webhook message (issue 29). */
  format: text('format', { enum: ['standard', 'slack'] }).notNull().default('standard'),
  /** The signatures sent: v1 (HMAC-SHA256 with the secret), v1a (ed25519 with signing_key), or both. */
  signatureSchemes: text('signature_schemes').array().notNull().default(sql`'{v1}'::text[]`),
  /** The ed25519 private key (whsk_…), sealed like the secret; null until v1a is chosen. */
  signingKey: text('signing_key'),
  /** Its public key (whpk_…), readable by anyone who may read the webhook. */
  publicKey: text('public_key'),
  /** At most this many messages a second to this endpoint; null: no limit. */
  rateLimit: integer('rate_limit'),
  /** Set when the endpoint was disabled by the worker (a 410 Gone), with why; cleared when enabled again. */
  disabledReason: text('disabled_reason'),
  createdBy: text('created_by').references(() => users.id, { onDelete: 'set null' }),
  createdAt: createdAt(),
  updatedAt: tstz('updated_at').notNull().defaultNow(),
}, (t) => [
  index('webhooks_project_idx').on(t.projectId),
  sealed('webhooks_secret_sealed_check', '"secret" like \'enc:%\' and ("previous_secret" is null or "previous_secret" like \'enc:%\')'),
  sealed('webhooks_signing_key_sealed_check', '"signing_key" is null or "signing_key" like \'enc:%\''),
  oneOf('webhooks_format_check', 'format', ['standard', 'slack']),
  check('webhooks_signature_schemes_check', sql`"signature_schemes" <@ array['v1', 'v1a']::text[] and cardinality("signature_schemes") >= 1`),
  check('webhooks_rate_limit_check', sql`"rate_limit" is null or "rate_limit" between 1 and 1000`),
])

/** The outbox: one row per message to one webhook, written in the transaction of the change. */
export const webhookDeliveries = pgTable('webhook_deliveries', {
  /** msg_…: the stable webhook-id header, the same on every attempt. */
  id: text('id').primaryKey(),
  webhookId: text('webhook_id').notNull().references(() => webhooks.id, { onDelete: 'cascade' }),
  type: text('type').notNull(),
  // json, not jsonb: the text as written, members in the answer's order (jsonb sorts them).
  payload: json('payload').notNull(),
  createdAt: createdAt(),
  status: text('status', { enum: ['pending', 'succeeded', 'failed'] }).notNull().default('pending'),
  attempts: integer('attempts').notNull().default(0),
  nextAttemptAt: tstz('next_attempt_at').notNull().defaultNow(),
  lastStatusCode: integer('last_status_code'),
  lastError: text('last_error'),
  lastLatencyMs: integer('last_latency_ms'),
  deliveredAt: tstz('delivered_at'),
}, (t) => [
  index('webhook_deliveries_due_idx').on(t.status, t.nextAttemptAt),
  index('webhook_deliveries_webhook_idx').on(t.webhookId, t.createdAt.desc(), t.id),
  oneOf('webhook_deliveries_status_check', 'status', ['pending', 'succeeded', 'failed']),
])

export const alertMetrics = ['registrations', 'daily_users', 'event_count', 'event_users', 'pending_opportunities', 'oldest_pending_age_hours'] as const
export const alertConditions = ['above', 'below', 'anomaly'] as const

/**
 * A project's alerts (issue 29): a daily metric or the review queue against a threshold
 * (above/below) or its own recent weekdays (anomaly). `state` is where the last evaluation left
 * it; every change of state is a row of alert_events.
 */
export const alerts = pgTable('alerts', {
  /** alr_… */
  id: text('id').primaryKey(),
  projectId: text('project_id').notNull().references(() => projects.id, { onDelete: 'cascade' }),
  name: text('name').notNull(),
  metric: text('metric', { enum: alertMetrics }).notNull(),
  /** The event of event_count / event_users; null for the other metrics. */
  event: text('event'),
  condition: text('condition', { enum: alertConditions }).notNull(),
  /** The bound of above/below; null for anomaly. */
  threshold: doublePrecision('threshold'),
  enabled: boolean('enabled').notNull().default(true),
  state: text('state', { enum: ['ok', 'firing'] }).notNull().default('ok'),
  lastValue: doublePrecision('last_value'),
  lastEvaluatedAt: tstz('last_evaluated_at'),
  createdBy: text('created_by').references(() => users.id, { onDelete: 'set null' }),
  createdAt: createdAt(),
  updatedAt: tstz('updated_at').notNull().defaultNow(),
}, (t) => [
  index('alerts_project_idx').on(t.projectId, t.createdAt, t.id),
  oneOf('alerts_metric_check', 'metric', alertMetrics),
  oneOf('alerts_condition_check', 'condition', alertConditions),
  oneOf('alerts_state_check', 'state', ['ok', 'firing']),
])

/** Each firing and each recovery of an alert: what was measured, on which day, against what. */
export const alertEvents = pgTable('alert_events', {
  /** ale_… */
  id: text('id').primaryKey(),
  alertId: text('alert_id').notNull().references(() => alerts.id, { onDelete: 'cascade' }),
  projectId: text('project_id').notNull().references(() => projects.id, { onDelete: 'cascade' }),
  kind: text('kind', { enum: ['triggered', 'resolved'] }).notNull(),
  /** The project-zone day the value is of. */
  day: date('day', { mode: 'string' }).notNull(),
  value: doublePrecision('value').notNull(),
  /** What it was held against: the threshold, or the anomaly's expected range and method. */
  detail: jsonb('detail').notNull().default(sql`'{}'::jsonb`),
  at: tstz('at').notNull(),
}, (t) => [
  index('alert_events_project_idx').on(t.projectId, t.at.desc(), t.id),
  index('alert_events_alert_idx').on(t.alertId, t.at.desc(), t.id),
  oneOf('alert_events_kind_check', 'kind', ['triggered', 'resolved']),
])

/** A project's digest (issue 29): daily or weekly, at an hour of the project's zone, as a digest.ready message. */
export const digests = pgTable('digests', {
  projectId: text('project_id').primaryKey().references(() => projects.id, { onDelete: 'cascade' }),
  frequency: text('frequency', { enum: ['daily', 'weekly'] }).notNull(),
  /** The local hour (0–23) it goes out at. */
  hour: smallint('hour').notNull(),
  /** Weekly: the ISO weekday (1 = Monday … 7 = Sunday) it goes out on; null for daily. */
  weekday: smallint('weekday'),
  enabled: boolean('enabled').notNull().default(true),
  /** The last period sent: its last day (project zone); the next one is due after it. */
  lastPeriodEnd: date('last_period_end', { mode: 'string' }),
  lastSentAt: tstz('last_sent_at'),
  createdBy: text('created_by').references(() => users.id, { onDelete: 'set null' }),
  createdAt: createdAt(),
  updatedAt: tstz('updated_at').notNull().defaultNow(),
}, (t) => [
  oneOf('digests_frequency_check', 'frequency', ['daily', 'weekly']),
  check('digests_hour_check', sql`"hour" between 0 and 23`),
  check('digests_weekday_check', sql`("frequency" = 'daily' and "weekday" is null) or ("frequency" = 'weekly' and "weekday" between 1 and 7)`),
])

export const schema = {
  workspaces,
  users,
  projects,
  memberships,
  apiKeys,
  opportunities,
  opportunityCounts,
  reviewHistory,
  tags,
  opportunityTags,
  comments,
  savedViews,
  events,
  dailyEventUsers,
  dailyEventCounts,
  userActivity,
  userActivityDays,
  projectEventStats,
  memories,
  sessions,
  invitations,
  invitationProjects,
  passwordResets,
  appSecrets,
  rateLimitHits,
  readMarks,
  oauthClients,
  oauthGrants,
  oauthCodes,
  oauthRefreshTokens,
  webhooks,
  webhookDeliveries,
  retentionQueue,
  retentionCells,
  retentionCohorts,
  alerts,
  alertEvents,
  digests,
}
