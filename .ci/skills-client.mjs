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
// Every (skill, file) pair, read by a few workers at once over the one session: a host reads
// files concurrently too, and one at a time the corpus took minutes of CI.
const reads = listing.skills.flatMap((skill) =>
  (which === 'all' ? skill.resources.map((r) => r.uri) : [undefined]).map((ref) => [skill, ref]),
);
const WORKERS = 8;
let next = 0;
let files = 0;
async function worker() {
  while (next < reads.length) {
    const [skill, ref] = reads[next++];
    const file = await skills.read(skill, ref);
    if (!file.verified) throw new Error(`${file.uri}: not verified`);
    files += 1;
  }
}
await Promise.all(Array.from({ length: WORKERS }, worker));
if (files !== reads.length) throw new Error(`${files} of ${reads.length} files read`);
await client.close();
console.log(`skills-client: ${listing.skills.length} skills listed, ${files} files read and verified`);
if (listing.skills.length < Number(minSkills)) {
  throw new Error(`${listing.skills.length} skills listed, fewer than ${minSkills}`);
}
