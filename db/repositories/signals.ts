// Ranked full-text search over what a team wrote down: opportunities and memories.
import { sql } from '../orm.ts'
import { rowsOf, type Queryable } from '../client.ts'
import type { SignalKind } from '../../schemas/signals.ts'

export interface SignalHit {
  kind: SignalKind
  id: string
  title: string
  snippet: string
  rank: number
  at: string
}

// Both expressions repeat their GIN index definitions word for word, so the indexes serve them.
const opportunityDocument = sql.raw(
  'to_tsvector(\'english\', contribution_type || \' \' || key_information || \' \' || reason || \' \' || suggested_action)'
)
// ShortWord=1 keeps short words ("Our", "Co") at the edges of a snippet.
const headline = '\'MaxWords=30, MinWords=12, ShortWord=1, MaxFragments=2, StartSel=**, StopSel=**\''

/**
 * What ranks the hits: the query without its excluded terms (`-word`, `-"a phrase"`). They
 * still filter; but ts_rank scores any query with a NOT at about 1e-20, which would rank every
 * hit of "pricing -enterprise" 0. A query of exclusions only ranks by itself (every hit 0).
 */
export function rankedBy(query: string): string {
  const positive = query.replace(/(^|\s)-("[^"]*"?|\S*)/g, '$1').trim()
  return positive === '' ? query : positive
}

export function createSignalsRepository(db: Queryable) {
  return {
    async search(projectId: string, query: string, kinds: SignalKind[], limit: number): Promise<SignalHit[]> {
      const parts = []
      if (kinds.includes('opportunity')) {
        parts.push(sql`
          select 'opportunity' as kind, id, contribution_type as title,
                 ts_headline('english', key_information || ' — ' || reason || ' — ' || suggested_action, q, ${sql.raw(headline)}) as snippet,
                 ts_rank(${opportunityDocument}, r) as rank, received_at as at
          from opportunities, q
          where project_id = ${projectId} and ${opportunityDocument} @@ q`)
      }
      if (kinds.includes('memory')) {
        parts.push(sql`
          select 'memory' as kind, id, coalesce(nullif(array_to_string(tags, ', '), ''), 'memory') as title,
                 ts_headline('english', content, q, ${sql.raw(headline)}) as snippet,
                 ts_rank(memory_document(content, tags), r) as rank, created_at as at
          from memories, q
          where project_id = ${projectId} and memory_document(content, tags) @@ q`)
      }
      if (parts.length === 0) return []
      const result = await db.execute(sql`
        with q as (select websearch_to_tsquery('english', ${query}) as q, websearch_to_tsquery('english', ${rankedBy(query)}) as r)
        select kind, id, title, snippet, rank::float8 as rank, at from (${sql.join(parts, sql` union all `)}) hits
        order by rank desc, at desc, id
        limit ${limit}`)
      return rowsOf<{ kind: SignalKind; id: string; title: string; snippet: string; rank: number; at: Date | string }>(result).map((r) => ({
        ...r,
        rank: Math.round(Number(r.rank) * 1e6) / 1e6,
        at: new Date(r.at).toISOString(),
      }))
    },
  }
}
