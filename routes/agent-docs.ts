// Public agent documents (spec 4.2), rendered once at start from the registry.
import type { FastifyPluginAsync } from 'fastify'
import { growthSkillMarkdown, llmsTxt, skillMarkdown } from '../docs/agent-docs.ts'

const agentDocs: FastifyPluginAsync<{ publicUrl: string }> = async (app, { publicUrl }) => {
  const tools = app.registry.contracts()
  const documents = [
    { url: '/SKILL.md', type: 'text/markdown; charset=utf-8', body: skillMarkdown(publicUrl, tools, (name) => app.registry.exampleArgs(name)[0]) },
    { url: '/skills/growth/SKILL.md', type: 'text/markdown; charset=utf-8', body: growthSkillMarkdown(publicUrl) },
    { url: '/llms.txt', type: 'text/plain; charset=utf-8', body: llmsTxt(publicUrl, tools) },
  ]
  for (const doc of documents) {
    app.get(doc.url, { schema: { tags: ['agent documents'], summary: `Public: ${doc.url}` } }, async (_req, reply) =>
      reply.type(doc.type).header('cache-control', 'public, max-age=300').send(doc.body)
    )
  }
}

export default agentDocs
