// The alert operations' wire forms of an alert and of a firing or recovery, and the refusal of
// a definition that cannot be kept (the same words for create_alert and update_alert).
import type { AlertEventRow, AlertRow } from '../db/repositories/alerts.ts'
import type { Alert, AlertEvent } from '../schemas/alerts.ts'
import { definitionProblems, type AlertDefinition } from '../core/alerts.ts'
import { invalidArguments } from '../core/errors.ts'

export function toAlert(row: AlertRow): Alert {
  return {
    id: row.id,
    name: row.name,
    metric: row.metric,
    event: row.event,
    condition: row.condition,
    threshold: row.threshold,
    enabled: row.enabled,
    state: row.state,
    last_value: row.lastValue,
    last_evaluated_at: row.lastEvaluatedAt?.toISOString() ?? null,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  }
}

export function toAlertEvent(row: AlertEventRow): AlertEvent {
  return {
    id: row.id,
    alert_id: row.alertId,
    kind: row.kind,
    day: row.day,
    value: row.value,
    detail: row.detail as Record<string, unknown>,
    at: row.at.toISOString(),
  }
}

/** Throws invalid_arguments naming each field of a definition that cannot be kept. */
export function checkDefinition(d: AlertDefinition & { event: string | null }): void {
  const problems = definitionProblems(d)
  if (problems.length > 0) throw invalidArguments(problems)
}
