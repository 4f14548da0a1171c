// Public agent documents (spec 4.2), rendered once at start from the registry.
import type { FastifyPluginAsync } from 'fastify'
import { agentDocuments } from '../docs/agent-docs.ts'

const agentDocs: FastifyPluginAsync<{ publicUrl: string }> = async (app, { publicUrl }) => {
  // The same texts MCP serves as resources and skills (routes/mcp-server.ts).
  const docs = agentDocuments(publicUrl, app.registry)
  const documents = [
    { url: '/SKILL.md', type: 'text/markdown', body: docs.skill, what: 'The skill for agents: every tool, how to connect and call it, the errors.' },
    { url: '/skills/growth/SKILL.md', type: 'text/markdown', body: docs.growthSkill, what: 'The growth skill: how an agent explores a project for opportunities.' },
    { url: '/llms.txt', type: 'text/plain', body: docs.llms, what: 'The llms.txt index of the service for language models.' },
  ]
  for (const doc of documents) {
    const response = { 200: { description: doc.what, content: { [doc.type]: { schema: { type: 'string' } } } } }
    app.get(doc.url, { schema: { tags: ['agent documents'], summary: `Public: ${doc.url}`, response } }, async (_req, reply) =>
      reply.type(`${doc.type}; charset=utf-8`).header('cache-control', 'public, max-age=300').send(doc.body)
    )
  }
}

export default agentDocs
