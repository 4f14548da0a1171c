// A project's tags and the opportunities carrying them (issue 28). A tag is made on first use,
// renamed and deleted by name; a name is unique in its project, any case (tags_project_name_key).
// Every write is one transaction: the opportunities it changes get one more version (in one
// UPDATE), one history entry each (action 'tag', before/after {tags}) and their webhook messages.
import { and, eq, isNull, sql } from '../orm.ts'
import { isUniqueViolation, rowsOf, type Queryable } from '../client.ts'
import { opportunities, reviewHistory } from '../schema.ts'
import { newId } from '../ids.ts'
import { enqueueWebhooks } from './webhooks.ts'
import { fullRow, nextVersion, toOpportunity } from './opportunities.ts'
import type { Opportunity } from '../../schemas/opportunities.ts'

/** At most this many tags on one opportunity. */
export const MAX_TAGS = 20

/** What tagging did: changed the opportunity (or found nothing to change), or why not. */
export type TagOutcome =
  | { kind: 'tagged'; opportunity: Opportunity; changed: boolean }
  | { kind: 'missing' }
  | { kind: 'moved'; version: number }
  | { kind: 'merged'; into: string }
  | { kind: 'too_many'; count: number }

/** What a rename or a deletion of a tag did: how many opportunities carried it, or why not. */
export type TagChangeOutcome = { kind: 'done'; name: string; opportunities: number } | { kind: 'missing' } | { kind: 'taken'; name: string }

/** Thrown inside a transaction to roll it back; the outcome is returned instead. */
class Rollback extends Error {
  readonly outcome: TagOutcome | TagChangeOutcome
  constructor(outcome: TagOutcome | TagChangeOutcome) {
    super('rollback')
    this.outcome = outcome
  }
}

/** The names of an opportunity's tags in name order (any case), as `tagNames` (opportunities.ts) reads them, spelled for an `o` alias. */
const namesOf = (alias: string, rename?: { id: string; name: string } | { drop: string }) => {
  const name = rename && 'name' in rename ? sql`case when t.id = ${rename.id} then ${rename.name}::text else t.name end` : sql`t.name`
  const skip = rename && 'drop' in rename ? sql` and t.id <> ${rename.drop}` : sql``
  return sql`coalesce((select array_agg(n order by lower(n), n) from (select ${name} as n from opportunity_tags ot join tags t on t.id = ot.tag_id where ot.opportunity_id = ${sql.raw(alias)}.id${skip}) x), '{}')`
}

export function createTagsRepository(db: Queryable) {
  /**
   * A rename or a deletion: the opportunities carrying the tag get one more version and one
   * history entry each (their tags before and after), in the statements of `tx`, before `apply`
   * changes the tag itself. The tag is locked first, so two changes of it take turns.
   */
  async function changeTag(
    tx: Queryable,
    projectId: string,
    name: string,
    actorUserId: string,
    now: Date,
    after: (tag: { id: string; name: string }) => { id: string; name: string } | { drop: string },
    apply: (tag: { id: string; name: string }) => Promise<void>
  ): Promise<{ tag: { id: string; name: string }; opportunities: number; changed: boolean } | null> {
    const [tag] = rowsOf<{ id: string; name: string }>(await tx.execute(sql`select id, name from tags where project_id = ${projectId} and lower(name) = lower(${name}) for update`))
    if (!tag) return null
    const next = after(tag)
    // A rename to the very same name changes nothing.
    if ('name' in next && next.name === tag.name) return { tag, opportunities: 0, changed: false }
    // The carriers, locked in id order (so two tag changes cannot deadlock), each bumped once.
    const [bumped] = rowsOf<{ n: number }>(await tx.execute(sql`
      with carriers as (
        select o.id from opportunities o
        where o.id in (select opportunity_id from opportunity_tags where tag_id = ${tag.id})
        order by o.id for update
      ), bumped as (
        update opportunities o set version = o.version + 1 from carriers c where o.id = c.id returning o.id
      )
      select count(*)::int as n from bumped`))
    await tx.execute(sql`
      insert into review_history (opportunity_id, actor_user_id, changed_at, action, before, after)
      select o.id, ${actorUserId}, ${now.toISOString()}::timestamptz, 'tag',
             jsonb_build_object('tags', ${namesOf('o')}), jsonb_build_object('tags', ${namesOf('o', next)})
      from opportunities o
      where o.id in (select opportunity_id from opportunity_tags where tag_id = ${tag.id})
      order by o.received_at, o.id`)
    await apply(tag)
    return { tag, opportunities: bumped!.n, changed: true }
  }

  return {
    /**
     * Adds and removes tags of one opportunity (names as given; any case names the same tag), in
     * one transaction: the tags new to the project are made, the rows of opportunity_tags
     * inserted (copying the opportunity's project_id and received_at) and deleted, and, when
     * anything changed, the version bumped, the history entry written and the opportunity.tagged
     * messages queued. The opportunity is locked first; the version bump's UPDATE holds the
     * preconditions (`ifVersion`, not merged), and a failed one is told apart by the locked row.
     * A call that changes nothing writes nothing (`changed: false`).
     */
    async tag(projectId: string, id: string, add: string[], remove: string[], actorUserId: string, now: Date, ifVersion?: number): Promise<TagOutcome> {
      try {
        return await db.transaction(async (tx) => {
          const [locked] = await tx
            .select({ version: opportunities.version, mergedInto: opportunities.mergedInto, tags: fullRow.tags })
            .from(opportunities)
            .where(and(eq(opportunities.id, id), eq(opportunities.projectId, projectId)))
            .for('update')
          if (!locked) return { kind: 'missing' }
          const [bumped] = await tx
            .update(opportunities)
            .set(nextVersion)
            .where(and(eq(opportunities.id, id), isNull(opportunities.mergedInto), ifVersion !== undefined ? eq(opportunities.version, ifVersion) : undefined))
            .returning({ id: opportunities.id })
          if (!bumped) return locked.mergedInto !== null ? { kind: 'merged', into: locked.mergedInto } : { kind: 'moved', version: locked.version }
          let changes = 0
          if (add.length > 0) {
            // Made on first use: a name the project has (any case) is that tag, kept as it is named.
            // (Lists go in as JSON text: drizzle spreads a JavaScript array into a list of parameters.)
            const made = JSON.stringify(add.map((name) => [newId('tag'), name]))
            await tx.execute(sql`
              insert into tags (id, project_id, name, created_at)
              select x.value->>0, ${projectId}, x.value->>1, ${now.toISOString()}::timestamptz from json_array_elements(${made}::json) as x
              on conflict (project_id, (lower(name))) do nothing`)
            const added = await tx.execute(sql`
              insert into opportunity_tags (opportunity_id, tag_id, project_id, received_at)
              select o.id, t.id, o.project_id, o.received_at from opportunities o join tags t on t.project_id = o.project_id
              where o.id = ${id} and lower(t.name) in (select lower(x) from json_array_elements_text(${JSON.stringify(add)}::json) as x)
              on conflict do nothing
              returning 1`)
            changes += rowsOf(added).length
          }
          if (remove.length > 0) {
            const removed = await tx.execute(sql`
              delete from opportunity_tags where opportunity_id = ${id}
                and tag_id in (select t.id from tags t where t.project_id = ${projectId} and lower(t.name) in (select lower(x) from json_array_elements_text(${JSON.stringify(remove)}::json) as x))
              returning 1`)
            changes += rowsOf(removed).length
          }
          const [row] = await tx.select(fullRow).from(opportunities).where(eq(opportunities.id, id))
          if (row!.tags.length > MAX_TAGS) throw new Rollback({ kind: 'too_many', count: row!.tags.length })
          if (changes === 0) throw new Rollback({ kind: 'tagged', opportunity: toOpportunity({ ...row!, version: locked.version }), changed: false })
          const before = { tags: locked.tags }
          const after = { tags: row!.tags }
          const [entry] = await tx.insert(reviewHistory).values({ opportunityId: id, actorUserId, changedAt: now, action: 'tag', before, after }).returning({ id: reviewHistory.id })
          const opportunity = toOpportunity(row!)
          await enqueueWebhooks(tx, projectId, 'opportunity.tagged', now, [{ ...opportunity, tagging: { history_id: entry!.id, actor: { id: actorUserId }, before, after } }])
          return { kind: 'tagged', opportunity, changed: true }
        })
      } catch (err) {
        if (err instanceof Rollback) return err.outcome as TagOutcome
        throw err
      }
    },

    /** The project's tags in name order (any case), each with how many opportunities not merged carry it. */
    async list(projectId: string): Promise<{ name: string; count: number }[]> {
      return rowsOf<{ name: string; count: number }>(await db.execute(sql`
        select t.name, count(o.id)::int as count
        from tags t
        left join opportunity_tags ot on ot.tag_id = t.id
        left join opportunities o on o.id = ot.opportunity_id and o.merged_into is null
        where t.project_id = ${projectId}
        group by t.id, t.name
        order by lower(t.name), t.name`))
    },

    /**
     * Renames the tag named `name` (any case) to `newName`, which no other tag of the project may
     * have (any case; `taken` otherwise: there is no merging of tags). A change of case alone is a
     * rename too. Every opportunity carrying it gets one more version and a history entry; one
     * tag.renamed message goes out.
     */
    async rename(projectId: string, name: string, newName: string, actorUserId: string, now: Date): Promise<TagChangeOutcome> {
      try {
        return await db.transaction(async (tx) => {
          const done = await changeTag(tx, projectId, name, actorUserId, now, (tag) => ({ id: tag.id, name: newName }), async (tag) => {
            await tx.execute(sql`update tags set name = ${newName} where id = ${tag.id}`)
          })
          if (!done) return { kind: 'missing' }
          if (!done.changed) return { kind: 'done', name: newName, opportunities: 0 }
          await enqueueWebhooks(tx, projectId, 'tag.renamed', now, [{ name: newName, previous_name: done.tag.name, opportunities: done.opportunities, actor: { id: actorUserId } }])
          return { kind: 'done', name: newName, opportunities: done.opportunities }
        })
      } catch (err) {
        // Another tag has the new name (the unique index, also against a concurrent rename).
        if (isUniqueViolation(err)) return { kind: 'taken', name: newName }
        throw err
      }
    },

    /** Deletes the tag named `name` (any case) from the project and every opportunity carrying it (each: a version, a history entry); one tag.deleted message. */
    async delete(projectId: string, name: string, actorUserId: string, now: Date): Promise<TagChangeOutcome> {
      return db.transaction(async (tx) => {
        const done = await changeTag(tx, projectId, name, actorUserId, now, (tag) => ({ drop: tag.id }), async (tag) => {
          // Its opportunity_tags rows go with it (on delete cascade).
          await tx.execute(sql`delete from tags where id = ${tag.id}`)
        })
        if (!done) return { kind: 'missing' }
        await enqueueWebhooks(tx, projectId, 'tag.deleted', now, [{ name: done.tag.name, opportunities: done.opportunities, actor: { id: actorUserId } }])
        return { kind: 'done', name: done.tag.name, opportunities: done.opportunities }
      })
    },
  }
}
