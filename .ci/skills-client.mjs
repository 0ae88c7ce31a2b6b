// The TypeScript SDK's SEP-2640 host (`SkillsClient` of `@modelcontextprotocol/client`), with
// its default options, against a running `skill-server serve`: `list()` walks every page and
// throws when one entry breaks a rule it checks, and `read()` verifies each file's size and
// digest (and for SKILL.md, the frontmatter against the entry).
// Usage: node skills-client.mjs URL MIN_SKILLS [all|skill-md]
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';

const [url, minSkills, which = 'all'] = process.argv.slice(2);
const client = new Client({ name: 'skills-engine-ci', version: '0.1.0' });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
const skills = new SkillsClient(client);
if (!skills.supported) throw new Error(`${url}: the skills extension is not declared`);
const listing = await skills.list();
let files = 0;
for (const skill of listing.skills) {
  const refs = which === 'all' ? skill.resources.map((r) => r.uri) : [undefined];
  for (const ref of refs) {
    const file = await skills.read(skill, ref);
    if (!file.verified) throw new Error(`${file.uri}: not verified`);
    files += 1;
  }
}
await client.close();
console.log(`skills-client: ${listing.skills.length} skills listed, ${files} files read and verified`);
if (listing.skills.length < Number(minSkills)) {
  throw new Error(`${listing.skills.length} skills listed, fewer than ${minSkills}`);
}
