import { and, asc, desc, eq, getTableColumns, gt, inArray, isNull, or, sql, type SQL } from '../orm.ts'
import { isoMillis, preparedRows, rowsOf, utcTimeText, type Queryable } from '../client.ts'
import { opportunities, opportunityCounts, opportunityTags, reviewHistory, users } from '../schema.ts'
import { newId } from '../ids.ts'
import { enqueueWebhooks } from './webhooks.ts'
import type { Evaluation, Opportunity, SimilarOpportunity, Status } from '../../schemas/opportunities.ts'

/**
 * The names of an opportunity's tags, in name order (any case): a subquery on the row at hand.
 * The row's id is spelled out: drizzle writes a column of the select's own table unqualified,
 * and inside this subquery a bare "id" is tags.id (so every opportunity had no tags).
 */
const tagNames = sql<string[]>`coalesce((select array_agg(t.name order by lower(t.name), t.name) from opportunity_tags ot join tags t on t.id = ot.tag_id where ot.opportunity_id = "opportunities"."id"), '{}')`
/**
 * The email of an opportunity's assignee: a subquery on the row at hand, run only when there is
 * one. Each run of a subquery costs PostgreSQL a scan's start (on a table small enough to be
 * scanned whole, as users usually is, an lseek of its file to learn its size): unguarded, a
 * page of 20 unassigned opportunities paid for 20 of them.
 */
const assigneeEmail = sql<string | null>`case when "opportunities"."assignee_user_id" is null then null else (select u.email from users u where u.id = "opportunities"."assignee_user_id") end`

/** What a write returns of an opportunity (`.returning(fullRow)`) or a read selects: the row, its tags and its assignee's email. */
export const fullRow = { ...getTableColumns(opportunities), tags: tagNames, assigneeEmail }
export type Row = typeof opportunities.$inferSelect & { tags: string[]; assigneeEmail: string | null }

export function toOpportunity(row: Row): Opportunity {
  return {
    event_id: row.id,
    contribution_type: row.contributionType,
    key_information: row.keyInformation,
    reason: row.reason,
    suggested_action: row.suggestedAction,
    source_url: row.sourceUrl,
    external_id: row.externalId,
    received_at: row.receivedAt.toISOString(),
    evaluation: row.evaluation,
    status: row.status,
    review_note: row.reviewNote,
    review_updated_at: row.reviewUpdatedAt?.toISOString() ?? null,
    version: row.version,
    report_count: row.reportCount,
    merged_into: row.mergedInto,
    tags: row.tags,
    assignee: row.assigneeUserId !== null && row.assigneeEmail !== null ? { id: row.assigneeUserId, email: row.assigneeEmail } : null,
  }
}

/**
 * A time as the app's connections write a timestamptz: "2026-11-24 03:52:38.123456+00", the
 * fraction without its trailing zeros, or none (DateStyle ISO, TimeZone UTC: pinned on every
 * PostgreSQL connection and the PGlite session, db/client.ts). The column as it is: writing it costs PostgreSQL
 * less than `(t at time zone 'UTC')::text` did, and that less than half of `to_char` (which was
 * about a quarter of a listing's database time); `isoMillis` and `isoMicros` make ISO text of it.
 */
const utcText = <T extends string | null>(column: typeof opportunities.receivedAt | typeof opportunities.reviewUpdatedAt) => sql<T>`${column}`

/** A `utcText` to the microsecond: "2026-11-24T03:52:38.123456Z" (the listing's key). */
function isoMicros(t: string): string {
  const u = utcTimeText(t)
  return `${u.slice(0, 10)}T${u.length === 19 ? `${u.slice(11)}.000000` : `${u.slice(11)}00000`.slice(0, 15)}Z`
}

/**
 * A listed opportunity's tags (`tagNames`), looked up only when its project has a tag at all: the
 * project's tags are looked for once per statement (an InitPlan, tags_project_name_key), and a
 * project without any (an opportunity carries only tags of its own project) answers '{}' for
 * every row without the subquery per row (its aggregate's sort, its scans' starts: about half of
 * the PostgreSQL CPU of a 20-row page, docs/benchmarks.md).
 */
const listedTags = sql<string[]>`case when exists (select 1 from tags pt where pt.project_id = ${sql.placeholder('projectId')}::text) then ${tagNames} else '{}'::text[] end`

/**
 * What the listing and the export read of an opportunity, in the order `listed` takes them: the
 * fields the API answers with, its times as `utcText`, then (in a page) the total. So a listed
 * row needs no Date and no drizzle mapping.
 */
const listedFields = {
  event_id: opportunities.id,
  contribution_type: opportunities.contributionType,
  key_information: opportunities.keyInformation,
  reason: opportunities.reason,
  suggested_action: opportunities.suggestedAction,
  source_url: opportunities.sourceUrl,
  external_id: opportunities.externalId,
  received_at: utcText<string>(opportunities.receivedAt),
  evaluation: opportunities.evaluation,
  status: opportunities.status,
  review_note: opportunities.reviewNote,
  review_updated_at: utcText<string | null>(opportunities.reviewUpdatedAt),
  version: opportunities.version,
  report_count: opportunities.reportCount,
  merged_into: opportunities.mergedInto,
  tags: listedTags,
  assignee_id: opportunities.assigneeUserId,
  assignee_email: assigneeEmail,
}

/** A listed row as the opportunity the API answers with (`toOpportunity`'s fields and order), with its exact time (`at`, a `utcText`) and the page's total. */
function listed(v: unknown[]): { o: Opportunity; at: string; total: number | undefined } {
  const at = v[7] as string
  const reviewed = v[11] as string | null
  return {
    o: {
      event_id: v[0] as string,
      contribution_type: v[1] as string,
      key_information: v[2] as string,
      reason: v[3] as string,
      suggested_action: v[4] as string,
      source_url: v[5] as string | null,
      external_id: v[6] as string | null,
      received_at: isoMillis(at),
      evaluation: v[8] as Evaluation,
      status: v[9] as Status,
      review_note: v[10] as string,
      review_updated_at: reviewed === null ? null : isoMillis(reviewed),
      version: v[12] as number,
      report_count: v[13] as number,
      merged_into: v[14] as string | null,
      tags: v[15] as string[],
      assignee: v[16] !== null && v[17] !== null ? { id: v[16] as string, email: v[17] as string } : null,
    },
    at,
    total: v[18] as number | undefined,
  }
}

export interface ListFilters {
  type: string
  status: Status | 'all'
  evaluation: Evaluation | 'all'
  /** Only those received on this calendar day in this time zone. */
  receivedOn?: { day: string; timeZone: string }
  /** Only those whose texts (key_information, reason, suggested_action, contribution_type) contain this, any case. */
  q?: string
  /** Only those carrying the tag of this name (any case); a name no tag has: none. */
  tag?: string
  /** Only those given to this user (a user id or an email; one no user has: none), or (null) to no one. */
  assignee?: string | null
  page: number
  pageSize: number
  /** Only those after this key in listing order (the cursor); `page` is then not used. */
  after?: ListKey
}

/** A place in listing order: received_at (ISO, microseconds, Z) and id of an opportunity. */
export interface ListKey {
  at: string
  id: string
}

export interface ReviewChange {
  evaluation?: Evaluation
  status?: Status
  reviewNote?: string
}

/** What a review did: changed the opportunity, found none, found it merged into another (`into`), or found it at another version than the precondition's (`version`: its current one). */
export type ReviewOutcome = { kind: 'reviewed'; opportunity: Opportunity } | { kind: 'missing' } | { kind: 'merged'; into: string } | { kind: 'moved'; version: number }

/** What a bulk review did: all of them, or nothing because some are missing or have moved (each with the version it is at). */
export type BulkReviewOutcome =
  | { kind: 'reviewed'; items: Opportunity[] }
  | { kind: 'missing'; missing: string[] }
  | { kind: 'merged'; merged: { id: string; into: string }[] }
  | { kind: 'moved'; moved: { id: string; expected: number; version: number }[] }

/** The change every write makes besides its own: one more version, computed by PostgreSQL in the UPDATE itself. */
export const nextVersion = { version: sql`${opportunities.version} + 1` }

/** Thrown inside a bulk review's transaction to roll it back when a precondition failed. */
class PreconditionFailed extends Error {}

/** How a listing statement reads: a first page, after a cursor, by offset forwards or from the end (or only the total). */
type ListWay = 'first' | 'after' | 'forward' | 'backward' | 'total'

/** The values of a listing's placeholders (only those of the filters set are used). */
function listValues(projectId: string, f: ListFilters) {
  return {
    projectId,
    type: f.type,
    status: f.status,
    evaluation: f.evaluation,
    day: f.receivedOn?.day ?? null,
    timeZone: f.receivedOn?.timeZone ?? null,
    afterAt: f.after?.at ?? null,
    afterId: f.after?.id ?? null,
    q: f.q !== undefined ? `%${likeEscape(f.q)}%` : null,
    tag: f.tag ?? null,
    assignee: f.assignee ?? null,
  }
}

/** A text as a LIKE pattern matching exactly it: its wildcards and the escape character escaped. */
export function likeEscape(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`)
}

/** The history entry of a review: before → after of the fields it sent. */
function historyOf(change: ReviewChange, before: ReviewState, after: ReviewState) {
  const pick = (s: ReviewState) => ({
    ...(change.evaluation !== undefined ? { evaluation: s.evaluation } : {}),
    ...(change.status !== undefined ? { status: s.status } : {}),
    ...(change.reviewNote !== undefined ? { review_note: s.reviewNote } : {}),
  })
  return { before: pick(before), after: pick(after) }
}

/** The data of an opportunity.reviewed message: the opportunity, and the review (who, before → after, its history entry). */
function reviewedData(opportunity: Opportunity, historyId: number, actorUserId: string, history: ReturnType<typeof historyOf>) {
  return { ...opportunity, review: { history_id: historyId, actor: { id: actorUserId }, before: history.before, after: history.after } }
}

interface ReviewState {
  evaluation: string
  status: string
  reviewNote: string
}

const p = sql.placeholder

/** The listing's filters and its total, with placeholders for every value. */
function listConditions(f: ListFilters) {
  // A merged opportunity is in no listing (nor in the counters: see migration 0016).
  const where: (SQL | undefined)[] = [eq(opportunities.projectId, p('projectId')), isNull(opportunities.mergedInto)]
  if (f.type !== 'all') where.push(eq(opportunities.contributionType, p('type')))
  if (f.status !== 'all') where.push(eq(opportunities.status, p('status')))
  if (f.evaluation !== 'all') where.push(eq(opportunities.evaluation, p('evaluation')))
  if (f.receivedOn) {
    // Local midnight to local midnight, computed by PostgreSQL, so a 23- or 25-hour day is right.
    where.push(sql`${opportunities.receivedAt} >= (${p('day')}::date::timestamp at time zone ${p('timeZone')}::text)`)
    where.push(sql`${opportunities.receivedAt} < ((${p('day')}::date + 1)::timestamp at time zone ${p('timeZone')}::text)`)
  }
  if (f.q !== undefined) {
    // A substring in any of the texts, any case (the pattern's wildcards are escaped).
    const pattern = sql`${p('q')}::text`
    where.push(
      sql`(${opportunities.keyInformation} ilike ${pattern} or ${opportunities.reason} ilike ${pattern} or ${opportunities.suggestedAction} ilike ${pattern} or ${opportunities.contributionType} ilike ${pattern})`
    )
  }
  if (f.assignee === null) where.push(isNull(opportunities.assigneeUserId))
  else if (f.assignee !== undefined) {
    // An id or an email (emails are stored in lower case, one account each): an index range of
    // opportunities_assignee_idx, in listing order.
    where.push(sql`${opportunities.assigneeUserId} = (select u.id from users u where u.id = ${p('assignee')}::text or u.email = lower(${p('assignee')}::text))`)
  }
  // One day of submissions: counting the index range is cheap. All dates: the trigger-maintained
  // totals, exact without counting rows.
  const counted: (SQL | undefined)[] = [eq(opportunityCounts.projectId, p('projectId'))]
  if (f.type !== 'all') counted.push(eq(opportunityCounts.contributionType, p('type')))
  if (f.status !== 'all') counted.push(eq(opportunityCounts.status, p('status')))
  if (f.evaluation !== 'all') counted.push(eq(opportunityCounts.evaluation, p('evaluation')))
  // A search, one day, a tag or an assignee: counting the matching rows (the counters know none
  // of them). All dates, no search: the counters.
  const onlyThis = f.type === 'all' && f.status === 'all' && f.evaluation === 'all' && !f.receivedOn && f.q === undefined
  const total = onlyThis && f.tag !== undefined && f.assignee === undefined
    ? onlyTagTotal
    : onlyThis && f.tag === undefined && f.assignee !== undefined
      ? onlyAssigneeTotal(f.assignee === null)
      : f.tag !== undefined
        ? sql<number>`(select count(*)::int from ${opportunityTags} join ${opportunities} on ${opportunities.id} = ${opportunityTags.opportunityId} where ${opportunityTags.tagId} = ${tagId} and ${and(...where)})`
        : f.receivedOn || f.q !== undefined || f.assignee !== undefined
          ? sql<number>`(select count(*)::int from ${opportunities} where ${and(...where)})`
          : sql<number>`(select coalesce(sum(${opportunityCounts.n}), 0)::int from ${opportunityCounts} where ${and(...counted)})`
  return { where, total }
}

/** The id of the project's tag named by the `tag` placeholder (any case), or null: one lookup in tags_project_name_key. */
const tagId = sql`(select t.id from tags t where t.project_id = ${p('projectId')}::text and lower(t.name) = lower(${p('tag')}::text))`

/**
 * The total of a listing by tag alone: the tag's entries in opportunity_tags (an index-only count
 * of opportunity_tags_listing_idx's range) less those of merged opportunities (read through the
 * partial index of the merged ones, which are few). Joining every entry to its opportunity to
 * check it is not merged cost 28 ms at 10,000 entries; this, a few.
 */
const onlyTagTotal = sql<number>`((select count(*) from opportunity_tags ot where ot.tag_id = ${tagId})
  - (select count(*) from opportunities m where m.merged_into is not null and m.project_id = ${p('projectId')}::text
       and exists (select 1 from opportunity_tags mt where mt.opportunity_id = m.id and mt.tag_id = ${tagId})))::int`

/**
 * The total of a listing by assignee alone (`nobody`: the unassigned): an index-only count of
 * opportunities_assignee_idx's range, less the merged ones of that assignee (the partial index of
 * the merged ones).
 */
function onlyAssigneeTotal(nobody: boolean) {
  const whose = (t: 'a' | 'm') => nobody
    ? sql.raw(`${t}.assignee_user_id is null`)
    : sql`${sql.raw(t)}.assignee_user_id = (select u.id from users u where u.id = ${p('assignee')}::text or u.email = lower(${p('assignee')}::text))`
  return sql<number>`((select count(*) from opportunities a where a.project_id = ${p('projectId')}::text and ${whose('a')})
    - (select count(*) from opportunities m where m.merged_into is not null and m.project_id = ${p('projectId')}::text and ${whose('m')}))::int`
}

/**
 * Where a listing reads its rows, and the listing's key (received_at, id). With a tag, from that
 * tag's rows of opportunity_tags joined to their opportunities: opportunity_tags_listing_idx
 * (tag_id, received_at desc, opportunity_id) is then the listing order itself, and a page (or a
 * cursor's index range) reads only that tag's rows, however many the project has. Without, from
 * opportunities and their (project_id, received_at desc, id) indexes.
 */
function listSource<T extends { from(t: typeof opportunities | typeof opportunityTags): any }>(select: T, f: { tag?: string }) {
  if (f.tag === undefined) return { query: select.from(opportunities), at: opportunities.receivedAt, id: opportunities.id, where: [] as SQL[] }
  return {
    query: select.from(opportunityTags).innerJoin(opportunities, eq(opportunities.id, opportunityTags.opportunityId)),
    at: opportunityTags.receivedAt,
    id: opportunityTags.opportunityId,
    where: [sql`${opportunityTags.tagId} = ${tagId}`],
  }
}

/** Only the total of the listing for the filters set in `f`. */
function buildTotal(db: Queryable, f: ListFilters, name: string) {
  return db.select({ total: listConditions(f).total }).from(sql`(values (1)) as one (x)`).prepare(name)
}

/** Only the rows after the key (afterAt, afterId) in listing order: an index range from the key on. */
function afterKey(at: typeof opportunities.receivedAt | typeof opportunityTags.receivedAt = opportunities.receivedAt, id: typeof opportunities.id | typeof opportunityTags.opportunityId = opportunities.id): SQL[] {
  const key = sql`${p('afterAt')}::timestamptz`
  return [sql`${at} <= ${key}`, sql`(${at} < ${key} or ${id} > ${p('afterId')}::text)`]
}

/** The listing's page for the filters set in `f`, read `way`, each row with the total. */
function buildList(db: Queryable, f: ListFilters, way: Exclude<ListWay, 'total'>, name: string) {
  const { where, total } = listConditions(f)
  const source = listSource(db.select({ ...listedFields, total }), f)
  where.unshift(...source.where)
  if (way === 'after') where.push(...afterKey(source.at, source.id))
  const query = source.query
    .where(and(...where))
    .orderBy(...(way === 'backward' ? [asc(source.at), desc(source.id)] : [desc(source.at), asc(source.id)]))
    .limit(p('limit'))
  return preparedRows(db, way === 'forward' || way === 'backward' ? query.offset(p('offset')) : query, name, listed)
}

/** The filters of a walk through the whole listing (an export): no page. */
export type WalkFilters = Omit<ListFilters, 'page' | 'pageSize' | 'after'>

/** A batch of the walk for the filters set in `f`: the first, or the one after a key; no total. */
function buildWalk(db: Queryable, f: WalkFilters, after: boolean, name: string) {
  const { where } = listConditions({ ...f, page: 1, pageSize: 1 })
  const source = listSource(db.select(listedFields), f)
  where.unshift(...source.where)
  if (after) where.push(...afterKey(source.at, source.id))
  const query = source.query
    .where(and(...where))
    .orderBy(desc(source.at), asc(source.id))
    .limit(p('limit'))
  return preparedRows(db, query, name, listed)
}

/**
 * Similarity of opportunities (issue 28): pg_trgm's `similarity` of key_information, ranked on a
 * bounded set of candidates: the rows sharing a MinHash band of their words with the text
 * (`similarity_bands && …`, a GIN index; db/migrations/0017_similarity_bands.sql), at most
 * 10 through the 8 strict bands (near-duplicates: one word changed) and 15 through the 16 loose
 * ones (rewordings), each tier's those sharing most bands of at most 1,000 and 100 rows read. So
 * a query reads 24 posting lists and at most 1,100 rows and ranks at most 25, however many look
 * alike (the trigram index read every posting list of the text's trigrams and rechecked every
 * row half-alike: 220 ms a submit at 100k rows of look-alikes).
 * Chosen over full-text ranking and the exhaustive trigram search by bench/similarity.ts and
 * bench/submit-similar.ts (docs/design.md).
 */
export const SIMILAR = {
  /** The score below which an opportunity is not similar (pg_trgm's own default threshold). */
  minScore: 0.3,
  /** How many a submission answers. */
  atSubmit: 5,
  /** How much of a text is compared: its first 1,000 characters (the bands take the words of as many). */
  chars: 1000,
  /**
   * Each tier of bands reads at most `read` rows sharing one of its bands and keeps the `keep`
   * sharing most: at most 25 rows ranked by similarity() (about 60 µs each on PostgreSQL under
   * load, 80 µs in PGlite), however many look alike.
   */
  strict: { read: 1000, keep: 10 },
  loose: { read: 100, keep: 15 },
  /** Bands 0–15 of similarity_bands are the loose ones, 16–23 the strict ones. */
  looseBands: 16,
  /** false: submit skips the similarity query (bench/submit-similar.ts measures submit both ways). */
  atSubmitEnabled: true,
}

export interface SimilarQuery {
  text: string
  limit: number
  minScore: number
  /** An opportunity never similar to itself: the one whose text it is. */
  exclude?: string
}

/**
 * The opportunities of the project not merged into another whose key_information is most like
 * `text`, best first (score, then id), each with its score rounded to 3 decimals. `bands`: the
 * text's similarity bands in this project when known (a stored row's), else computed here.
 */
async function similarIn(tx: Queryable, projectId: string, q: SimilarQuery, bands?: number[]): Promise<SimilarOpportunity[]> {
  const text = q.text.slice(0, SIMILAR.chars)
  bands ??= rowsOf<{ b: number[] }>(await tx.execute(sql`select opportunity_similarity_bands(${projectId}::text, ${text}::text) as b`))[0]!.b
  if (bands.length === 0) return []
  const strict = `{${bands.slice(SIMILAR.looseBands).join(',')}}`
  const loose = `{${bands.slice(0, SIMILAR.looseBands).join(',')}}`
  const where = (tier: string) => sql`project_id = ${projectId} and merged_into is null and id <> ${q.exclude ?? ''} and similarity_bands && ${tier}::int[]`
  // Each tier: of at most `read` rows sharing one of its bands, the `keep` sharing most (a
  // cluster of look-alikes cannot push a near-duplicate out), ranked by similarity() together.
  const tier = (bandsOf: string, t: { read: number; keep: number }) => sql`(select id, key_information from (
      select id, key_information, similarity_bands from opportunities where ${where(bandsOf)} limit ${t.read}) r
    order by (select count(*) from unnest(r.similarity_bands) b where b = any(${bandsOf}::int[])) desc limit ${t.keep})`
  return rowsOf<SimilarOpportunity>(await tx.execute(sql`
    select id as event_id, round(s::numeric, 3)::float8 as score, key_information from (
      select id, key_information, similarity(key_information, ${text}::text) as s from (
        ${tier(strict, SIMILAR.strict)} union ${tier(loose, SIMILAR.loose)}
      ) c
    ) r
    where s >= ${q.minScore}
    order by s desc, id
    limit ${q.limit}`))
}

export function createOpportunitiesRepository(db: Queryable) {
  /**
   * The listing's statements, one per shape (which filters are set, and which way it reads),
   * built on first use with placeholders and prepared: a call neither writes SQL nor has
   * PostgreSQL parse it again. At most 32 × 2 × 3 filter shapes × 5 ways.
   */
  const shape = (f: ListFilters) =>
    `${f.type !== 'all' ? 't' : ''}${f.status !== 'all' ? 's' : ''}${f.evaluation !== 'all' ? 'e' : ''}${f.receivedOn ? 'd' : ''}${f.q !== undefined ? 'q' : ''}` +
    `${f.tag !== undefined ? 'g' : ''}${f.assignee === null ? 'n' : f.assignee !== undefined ? 'a' : ''}`
  const pages = new Map<string, ReturnType<typeof buildList>>()
  const totals = new Map<string, ReturnType<typeof buildTotal>>()
  function listStatement(f: ListFilters, way: Exclude<ListWay, 'total'>) {
    const key = `${way}_${shape(f)}`
    let statement = pages.get(key)
    if (!statement) pages.set(key, (statement = buildList(db, f, way, `list_opportunities_${key}`)))
    return statement
  }
  const walks = new Map<string, ReturnType<typeof buildWalk>>()
  function walkStatement(f: WalkFilters, after: boolean) {
    const key = `${after ? 'after' : 'first'}_${shape({ ...f, page: 1, pageSize: 1 })}`
    let statement = walks.get(key)
    if (!statement) walks.set(key, (statement = buildWalk(db, f, after, `walk_opportunities_${key}`)))
    return statement
  }
  function totalStatement(f: ListFilters) {
    const key = shape(f)
    let statement = totals.get(key)
    if (!statement) totals.set(key, (statement = buildTotal(db, f, `list_opportunities_total_${key}`)))
    return statement
  }
  return {
    /** Inserts, or returns the existing opportunity with the same external_id (created: false). */
    async submit(input: {
      projectId: string
      submittedBy: string
      contributionType: string
      keyInformation: string
      reason: string
      suggestedAction: string
      sourceUrl?: string
      externalId?: string
      receivedAt: Date
    }): Promise<{ opportunity: Opportunity; created: boolean; similar: SimilarOpportunity[] }> {
      // The opportunity, its opportunity.submitted messages and the similar ones, in one
      // transaction (on a replay: the existing one and those similar to it).
      return db.transaction(async (tx) => {
        const [row] = await tx
          .insert(opportunities)
          .values({ id: newId('opp'), ...input })
          .onConflictDoNothing({ target: [opportunities.projectId, opportunities.externalId] })
          .returning(fullRow)
        if (row) await enqueueWebhooks(tx, input.projectId, 'opportunity.submitted', input.receivedAt, [toOpportunity(row)])
        const found = row ?? (await tx
          .select(fullRow)
          .from(opportunities)
          .where(and(eq(opportunities.projectId, input.projectId), eq(opportunities.externalId, input.externalId!))))[0]!
        const similar = SIMILAR.atSubmitEnabled
          ? await similarIn(tx, input.projectId, { text: found.keyInformation, limit: SIMILAR.atSubmit, minScore: SIMILAR.minScore, exclude: found.id }, found.similarityBands)
          : []
        return { opportunity: toOpportunity(found), created: Boolean(row), similar }
      })
    },

    /** The opportunities most like `q.text` (see similarIn). */
    async similar(projectId: string, q: SimilarQuery): Promise<SimilarOpportunity[]> {
      return similarIn(db, projectId, q)
    },

    /**
     * A page in listing order (received_at desc, then id), and the total. Three ways to a page:
     * after a key (the cursor: an index range from the key on, as fast at the end as at the
     * start); by page number in the first half (OFFSET from the start); by page number in the
     * second half (OFFSET from the end, read backwards, so the last pages cost what the first
     * do; only the middle of a long list costs its offset). `next` is the key of the page's last
     * item when more follow.
     */
    async list(projectId: string, f: ListFilters): Promise<{ items: Opportunity[]; total: number; next: ListKey | null }> {
      const size = f.pageSize
      const offset = (f.page - 1) * size
      const values = listValues(projectId, f)
      let rows: ReturnType<typeof listed>[]
      let total: number
      let more: boolean
      if (f.after || offset === 0) {
        // The common case, one statement: the first page or the page after a cursor, with the
        // total beside every row (read in the same snapshot as the rows).
        rows = await listStatement(f, f.after ? 'after' : 'first').execute({ ...values, limit: size + 1 })
        total = rows[0]?.total ?? 0
        // No row after a cursor says nothing of the total (on a first page it is 0).
        if (rows.length === 0 && f.after) total = (await totalStatement(f).execute(values))[0]!.total
        more = rows.length > size
      } else {
        // A page by number further on: the total decides from which end to count.
        total = (await totalStatement(f).execute(values))[0]!.total
        if (offset >= total) {
          rows = []
          more = false
        } else if (2 * offset + size > total) {
          // Nearer the end: the rows after this page are skipped from the end, in reverse order.
          const after = total - offset - size
          rows = (await listStatement(f, 'backward').execute({ ...values, limit: size + Math.min(0, after), offset: Math.max(0, after) })).reverse()
          more = after > 0
        } else {
          rows = await listStatement(f, 'forward').execute({ ...values, limit: size + 1, offset })
          more = rows.length > size
        }
      }
      const page = rows.slice(0, size)
      const last = page.at(-1)
      return { items: page.map((r) => r.o), total, next: more && last ? { at: isoMicros(last.at), id: last.o.event_id } : null }
    },

    /**
     * Every opportunity matching the filters in listing order (newest first), in batches of
     * `batch` read one after the other by key (each an index range from the last key on, with
     * no total), so a caller can write each batch out before the next is read and hold only one.
     * Opportunities that arrive during the walk are newer than its first batch: not included.
     */
    async * walk(projectId: string, f: WalkFilters, batch = 1000): AsyncGenerator<Opportunity[]> {
      let after: ListKey | undefined
      for (;;) {
        const values = listValues(projectId, { ...f, page: 1, pageSize: batch, after })
        const rows = await walkStatement(f, after !== undefined).execute({ ...values, limit: batch })
        if (rows.length === 0) return
        const last = rows.at(-1)!
        after = { at: isoMicros(last.at), id: last.o.event_id }
        yield rows.map((r) => r.o)
        if (rows.length < batch) return
      }
    },

    /**
     * Changes only the sent review fields in one UPDATE, which also bumps the version, and
     * appends the change to the history, in one transaction; the row lock orders concurrent
     * reviews of the same opportunity. With `ifVersion`, the UPDATE changes the row only while
     * it is at that version: none changed means it moved, and the version read under the lock
     * (in this transaction, so still the current one) is the one to name.
     */
    async review(projectId: string, id: string, change: ReviewChange, actorUserId: string, now: Date, ifVersion?: number): Promise<ReviewOutcome> {
      return db.transaction(async (tx) => {
        const [before] = await tx
          .select({ evaluation: opportunities.evaluation, status: opportunities.status, reviewNote: opportunities.reviewNote, version: opportunities.version, mergedInto: opportunities.mergedInto })
          .from(opportunities)
          .where(and(eq(opportunities.id, id), eq(opportunities.projectId, projectId)))
          .for('update')
        if (!before) return { kind: 'missing' }
        // A merged opportunity is kept as it was for its unmerge (db/repositories/merges.ts).
        if (before.mergedInto !== null) return { kind: 'merged', into: before.mergedInto }
        const [after] = await tx
          .update(opportunities)
          .set({ ...change, reviewUpdatedAt: now, ...nextVersion })
          .where(and(eq(opportunities.id, id), isNull(opportunities.mergedInto), ifVersion !== undefined ? eq(opportunities.version, ifVersion) : undefined))
          .returning(fullRow)
        if (!after) return { kind: 'moved', version: before.version }
        const history = historyOf(change, before, after!)
        const [entry] = await tx.insert(reviewHistory).values({ opportunityId: id, actorUserId, changedAt: now, ...history }).returning({ id: reviewHistory.id })
        const opportunity = toOpportunity(after!)
        await enqueueWebhooks(tx, projectId, 'opportunity.reviewed', now, [reviewedData(opportunity, entry!.id, actorUserId, history)])
        return { kind: 'reviewed', opportunity }
      })
    },

    /**
     * The same review of several opportunities, all or nothing, in one transaction: the rows are
     * locked (in id order, so two bulk reviews cannot deadlock), one UPDATE sets the sent fields
     * of all of them (and bumps each one's version), and each gets its history entry as a single
     * review does. When any id is not in the project nothing is written and the missing ids are
     * returned, in the order given; when any is merged into another, nothing is written either
     * and those are returned with where they are merged. With `ifVersions` (one per id), the UPDATE changes only the
     * rows still at their version; fewer rows than ids rolls the whole review back, and those
     * that moved are returned with the versions read under the lock.
     */
    async reviewMany(projectId: string, ids: string[], change: ReviewChange, actorUserId: string, now: Date, ifVersions?: number[]): Promise<BulkReviewOutcome> {
      // The rows as locked: the versions a failed precondition is answered with.
      let locked: (ReviewState & { id: string; version: number; mergedInto: string | null })[] = []
      try {
        return await db.transaction(async (tx) => {
          locked = await tx
            .select({ id: opportunities.id, evaluation: opportunities.evaluation, status: opportunities.status, reviewNote: opportunities.reviewNote, version: opportunities.version, mergedInto: opportunities.mergedInto })
            .from(opportunities)
            .where(and(eq(opportunities.projectId, projectId), inArray(opportunities.id, ids)))
            .orderBy(asc(opportunities.id))
            .for('update')
          const before = new Map(locked.map((r) => [r.id, r]))
          const missing = ids.filter((id) => !before.has(id))
          if (missing.length > 0) return { kind: 'missing', missing }
          const merged = ids.flatMap((id) => { const into = before.get(id)!.mergedInto; return into !== null ? [{ id, into }] : [] })
          if (merged.length > 0) return { kind: 'merged', merged }
          const preconditions = ifVersions ? or(...ids.map((id, i) => and(eq(opportunities.id, id), eq(opportunities.version, ifVersions[i]!)))) : undefined
          const updated = await tx
            .update(opportunities)
            .set({ ...change, reviewUpdatedAt: now, ...nextVersion })
            .where(and(eq(opportunities.projectId, projectId), inArray(opportunities.id, ids), isNull(opportunities.mergedInto), preconditions))
            .returning(fullRow)
          if (updated.length < ids.length) throw new PreconditionFailed()
          const after = new Map(updated.map((r) => [r.id, r]))
          const histories = ids.map((id) => historyOf(change, before.get(id)!, after.get(id)!))
          const entries = await tx
            .insert(reviewHistory)
            .values(ids.map((id, i) => ({ opportunityId: id, actorUserId, changedAt: now, ...histories[i]! })))
            .returning({ id: reviewHistory.id, opportunityId: reviewHistory.opportunityId })
          const entryOf = new Map(entries.map((e) => [e.opportunityId, e.id]))
          const items = ids.map((id) => toOpportunity(after.get(id)!))
          await enqueueWebhooks(tx, projectId, 'opportunity.reviewed', now, items.map((o, i) => reviewedData(o, entryOf.get(o.event_id)!, actorUserId, histories[i]!)))
          return { kind: 'reviewed', items }
        })
      } catch (err) {
        if (!(err instanceof PreconditionFailed)) throw err
        const current = new Map(locked.map((r) => [r.id, r.version]))
        const moved = ids.flatMap((id, i) => (current.get(id) !== ifVersions![i] ? [{ id, expected: ifVersions![i]!, version: current.get(id)! }] : []))
        return { kind: 'moved', moved }
      }
    },

    /** The contribution types the project has opportunities of, in name order (from the counters). */
    async types(projectId: string): Promise<string[]> {
      const rows = await db
        .selectDistinct({ type: opportunityCounts.contributionType })
        .from(opportunityCounts)
        .where(and(eq(opportunityCounts.projectId, projectId), gt(opportunityCounts.n, 0)))
        .orderBy(asc(opportunityCounts.contributionType))
      return rows.map((r) => r.type)
    },

    /** One opportunity of the project as the API answers with it, merged or not; null when there is none. */
    async get(projectId: string, id: string): Promise<Opportunity | null> {
      const [row] = await db
        .select(fullRow)
        .from(opportunities)
        .where(and(eq(opportunities.id, id), eq(opportunities.projectId, projectId)))
      return row ? toOpportunity(row) : null
    },

    async exists(projectId: string, id: string): Promise<boolean> {
      const [row] = await db
        .select({ id: opportunities.id })
        .from(opportunities)
        .where(and(eq(opportunities.id, id), eq(opportunities.projectId, projectId)))
      return Boolean(row)
    },

    /**
     * When the opportunity's status last became each of `statuses`, from its history: a change
     * from another status (setting the status it already had is no change); none for a status it
     * never became.
     */
    async lastBecame(id: string, statuses: readonly Status[]): Promise<{ status: Status; at: Date }[]> {
      const status = sql<Status>`${reviewHistory.after}->>'status'`
      return db
        .select({ status, at: sql`max(${reviewHistory.changedAt})`.mapWith(reviewHistory.changedAt) })
        .from(reviewHistory)
        .where(and(
          eq(reviewHistory.opportunityId, id),
          inArray(status, [...statuses]),
          sql`${reviewHistory.before}->>'status' is distinct from ${status}`
        ))
        .groupBy(status)
    },

    async history(id: string) {
      return db
        .select({ changedAt: reviewHistory.changedAt, action: reviewHistory.action, before: reviewHistory.before, after: reviewHistory.after, actorId: users.id, actorEmail: users.email })
        .from(reviewHistory)
        .leftJoin(users, eq(users.id, reviewHistory.actorUserId))
        .where(eq(reviewHistory.opportunityId, id))
        .orderBy(asc(reviewHistory.id))
    },
  }
}
