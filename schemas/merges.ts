// Merging opportunities (issue 28): the arguments and results of merge_opportunities,
// unmerge_opportunity and list_merged_opportunities.
import { Type } from '@sinclair/typebox'
import { EventId, Opportunity } from './opportunities.ts'

/** At most this many sources in one merge. */
export const MAX_MERGE_SOURCES = 20

export const MergeSourceIds = Type.Array(EventId, {
  minItems: 1,
  maxItems: MAX_MERGE_SOURCES,
  uniqueItems: true,
  description: 'The opportunities to fold into the target (1–20, each once, not the target): they leave listings, kept as they are.',
})

export const MergeResult = Type.Composite([
  Opportunity,
  Type.Object({ sources: Type.Array(Opportunity, { description: 'The opportunities this merge folded into it, in the order sent (each with `merged_into`).' }) }),
], { description: 'The target after the merge (new `report_count` and `version`), and its new sources.' })

export const UnmergeResult = Type.Composite([
  Opportunity,
  Type.Object({ unmerged_from: Opportunity }),
], { description: 'The opportunity as it was before its merge, and (`unmerged_from`) the target it left, with its `report_count` lowered and a new `version`.' })

export const MergedList = Type.Object({
  event_id: Type.String({ description: 'The target.' }),
  items: Type.Array(Opportunity, { description: 'The opportunities merged into it, in merge order.' }),
})
