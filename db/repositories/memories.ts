import { and, asc, desc, eq, sql, type SQL } from '../orm.ts'
import type { Queryable } from '../client.ts'
import { memories, users } from '../schema.ts'
import { newId } from '../ids.ts'
import { enqueueWebhooks } from './webhooks.ts'
import type { Memory } from '../../schemas/memories.ts'

const columns = {
  id: memories.id,
  projectId: memories.projectId,
  content: memories.content,
  tags: memories.tags,
  source: memories.source,
  createdBy: users.email,
  createdAt: memories.createdAt,
  updatedAt: memories.updatedAt,
}
type Row = { id: string; projectId: string; content: string; tags: string[]; source: string; createdBy: string | null; createdAt: Date; updatedAt: Date }

function toMemory(row: Row): Memory {
  return {
    id: row.id,
    project: row.projectId,
    content: row.content,
    tags: row.tags,
    source: row.source,
    created_by: row.createdBy,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  }
}

/** The same expression as the GIN index memories_search_idx, so the index serves it. */
export const memoryDocument = sql`memory_document(${memories.content}, ${memories.tags})`

export function createMemoriesRepository(db: Queryable) {
  async function byId(id: string, q: Queryable = db): Promise<Memory | undefined> {
    const [row] = await q.select(columns).from(memories).leftJoin(users, eq(users.id, memories.createdBy)).where(eq(memories.id, id))
    return row && toMemory(row)
  }

  return {
    find: byId,

    async add(input: { projectId: string; content: string; tags: string[]; source: string; createdBy: string; now: Date }): Promise<Memory> {
      const id = newId('mem')
      return db.transaction(async (tx) => {
        await tx.insert(memories).values({
          id,
          projectId: input.projectId,
          content: input.content,
          tags: input.tags,
          source: input.source,
          createdBy: input.createdBy,
          createdAt: input.now,
          updatedAt: input.now,
        })
        const memory = (await byId(id, tx))!
        await enqueueWebhooks(tx, input.projectId, 'memory.added', input.now, [memory])
        return memory
      })
    },

    async list(projectId: string, f: { query?: string; tag?: string; page: number; pageSize: number }): Promise<{ items: Memory[]; total: number }> {
      const where: (SQL | undefined)[] = [eq(memories.projectId, projectId)]
      if (f.query) where.push(sql`${memoryDocument} @@ websearch_to_tsquery('english', ${f.query})`)
      if (f.tag) where.push(sql`${memories.tags} @> array[${f.tag}]::text[]`)
      const [rows, [count]] = await Promise.all([
        db
          .select(columns)
          .from(memories)
          .leftJoin(users, eq(users.id, memories.createdBy))
          .where(and(...where))
          .orderBy(desc(memories.createdAt), asc(memories.id))
          .limit(f.pageSize)
          .offset((f.page - 1) * f.pageSize),
        db.select({ n: sql<number>`count(*)::int` }).from(memories).where(and(...where)),
      ])
      return { items: rows.map(toMemory), total: count!.n }
    },

    /** Changes only the sent fields, in one UPDATE. */
    async update(id: string, change: { content?: string; tags?: string[]; source?: string }, now: Date): Promise<Memory | undefined> {
      return db.transaction(async (tx) => {
        const [row] = await tx.update(memories).set({ ...change, updatedAt: now }).where(eq(memories.id, id)).returning({ id: memories.id })
        if (!row) return undefined
        const memory = (await byId(row.id, tx))!
        await enqueueWebhooks(tx, memory.project, 'memory.updated', now, [memory])
        return memory
      })
    },

    /** Deletes it, and tells the project's webhooks (memory.forgotten: the memory as it was). */
    async remove(id: string, now: Date = new Date()): Promise<boolean> {
      return db.transaction(async (tx) => {
        const memory = await byId(id, tx)
        const rows = await tx.delete(memories).where(eq(memories.id, id)).returning({ id: memories.id })
        if (rows.length === 0 || !memory) return false
        await enqueueWebhooks(tx, memory.project, 'memory.forgotten', now, [memory])
        return true
      })
    },
  }
}
