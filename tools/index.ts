// Every operation of the registry. A new tool is one file in this folder and one line here.
import type { Operation } from '../core/operations.ts'
import submitOpportunity from './submit-opportunity.ts'
import listOpportunities from './list-opportunities.ts'
import reviewOpportunity from './review-opportunity.ts'
import getReviewHistory from './get-review-history.ts'
import getOverview from './get-overview.ts'
import getDailyOps from './get-daily-ops.ts'
import getDailyEventSummary from './get-daily-event-summary.ts'
import getEventStream from './get-event-stream.ts'
import ingestEvents from './ingest-events.ts'

export const operations: Operation[] = [
  listOpportunities,
  reviewOpportunity,
  submitOpportunity,
  getReviewHistory,
  getOverview,
  getDailyOps,
  getDailyEventSummary,
  getEventStream,
  ingestEvents,
]
