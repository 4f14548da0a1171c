// Outgoing webhooks over REST: a table of routes, each an operation (the same ones as the tools).
import type { FastifyPluginAsync } from 'fastify'
import { operationRoute, type OperationRoute } from './operation-route.ts'
import createWebhook from '../tools/create-webhook.ts'
import listWebhooks from '../tools/list-webhooks.ts'
import getWebhook from '../tools/get-webhook.ts'
import updateWebhook from '../tools/update-webhook.ts'
import deleteWebhook from '../tools/delete-webhook.ts'
import rotateWebhookSecret from '../tools/rotate-webhook-secret.ts'
import testWebhook from '../tools/test-webhook.ts'
import listWebhookDeliveries from '../tools/list-webhook-deliveries.ts'
import redeliverWebhook from '../tools/redeliver-webhook.ts'
import replayWebhook from '../tools/replay-webhook.ts'

const routes: OperationRoute[] = [
  { method: 'POST', url: '/webhooks', op: createWebhook, status: 201 },
  { method: 'GET', url: '/webhooks', op: listWebhooks },
  { method: 'GET', url: '/webhooks/:id', op: getWebhook },
  { method: 'PATCH', url: '/webhooks/:id', op: updateWebhook },
  { method: 'DELETE', url: '/webhooks/:id', op: deleteWebhook },
  { method: 'POST', url: '/webhooks/:id/rotate-secret', op: rotateWebhookSecret },
  { method: 'POST', url: '/webhooks/:id/test', op: testWebhook, status: 201 },
  { method: 'GET', url: '/webhooks/:id/deliveries', op: listWebhookDeliveries },
  { method: 'POST', url: '/webhooks/:id/deliveries/:delivery/redeliver', op: redeliverWebhook },
  { method: 'POST', url: '/webhooks/:id/replay', op: replayWebhook },
]

const webhookRoutes: FastifyPluginAsync = async (app) => {
  app.addHook('onRequest', app.authenticate('tools-api'))
  for (const route of routes) operationRoute(app, { surface: 'tools-api', tag: 'webhooks' }, route)
}

export default webhookRoutes
