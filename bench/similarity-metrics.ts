// The labelled set of duplicates (test/fixtures/similarity-set.json) and how a ranking of it
// scores: bench/similarity.ts compares methods with it, test/similarity-quality.test.ts keeps
// the chosen one above a floor.
import { readFileSync } from 'node:fs'

export interface LabelledItem {
  id: string
  /** The finding it is a wording of; null: a distractor, the duplicate of none. */
  cluster: string | null
  contribution_type: string
  key_information: string
  reason: string
  suggested_action: string
}

export function loadSimilaritySet(): LabelledItem[] {
  const url = new URL('../test/fixtures/similarity-set.json', import.meta.url)
  return (JSON.parse(readFileSync(url, 'utf8')) as { items: LabelledItem[] }).items
}

export interface Quality {
  queries: number
  /** Share of queries whose first answer is of their cluster. */
  precisionAt1: number
  /** Mean share of a query's cluster found in its first 5 answers. */
  recallAt5: number
  /** Mean of 1 / the rank of the first answer of the cluster (0 when none in the answers). */
  mrr: number
  /** Share of the distractors' queries (no duplicate) answered with nothing. */
  distractorsEmpty: number
}

/**
 * How well `rank` finds duplicates: every item is a query (its key_information, itself excluded),
 * the answers (ids, best first) are judged against its cluster.
 */
export async function measure(set: LabelledItem[], rank: (item: LabelledItem) => Promise<string[]>): Promise<Quality> {
  const clusterOf = new Map(set.map((i) => [i.id, i.cluster]))
  let p1 = 0
  let r5 = 0
  let mrr = 0
  let queries = 0
  let distractors = 0
  let empty = 0
  for (const item of set) {
    const answers = (await rank(item)).filter((id) => id !== item.id)
    if (item.cluster === null) {
      distractors++
      if (answers.length === 0) empty++
      continue
    }
    queries++
    const relevant = set.filter((i) => i.cluster === item.cluster && i.id !== item.id).length
    const hits = answers.map((id) => clusterOf.get(id) === item.cluster)
    if (hits[0]) p1++
    r5 += hits.slice(0, 5).filter(Boolean).length / relevant
    const first = hits.indexOf(true)
    if (first >= 0) mrr += 1 / (first + 1)
  }
  return { queries, precisionAt1: p1 / queries, recallAt5: r5 / queries, mrr: mrr / queries, distractorsEmpty: distractors ? empty / distractors : 1 }
}
