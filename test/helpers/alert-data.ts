// What the webhook, Slack and alert tests send as an alert's event: a module of its own, with no
// imports, so that a unit test (test/slack.test.ts) takes it without loading the app.
/** An alert.triggered event's data as plugins/alerts.ts queues it: "Signups dropped", registrations 3 below 10 on 2026-11-24. */
export const triggeredAlert = (project: { id: string; slug: string; name: string }, at = new Date().toISOString()) => ({
  alert: { id: 'alr_1', name: 'Signups dropped', metric: 'registrations', event: null, condition: 'below', threshold: 10 },
  id: 'ale_1',
  kind: 'triggered',
  day: '2026-11-24',
  value: 3,
  detail: {},
  project: { id: project.id, slug: project.slug, name: project.name },
  at,
})
