//! Search: a request read as the index would spell it (typo matching, `typo.rs`), then
//! ranked (`index::rank`). Its own module because it joins the two: the index knows
//! nothing of typo matching, which reads the index.

use crate::Error;
use crate::hit::Match;
use crate::index::{Gate, MAX_LIMIT, SearchRequest, SkillIndex};
use crate::params::Params;
use crate::typo::{Corrected, note};

impl SkillIndex {
    /// Rank skills for a request: explicit mention of a skill's name first, then an exact
    /// phrase of the skill, then the fused lexical and semantic score with trigger bonuses
    /// (to 0.01), then recent use, then the lexical score, then the name. Request words no
    /// skill uses are first read as the nearest term of the skills' names and descriptions
    /// (a typo of one or two edits), and each hit's reason says so.
    ///
    /// ```
    /// use skill_registry::{Registry, RegistryConfig, Source};
    /// use skill_search::{SearchRequest, SkillIndex};
    ///
    /// let dir = tempfile::tempdir()?;
    /// for (name, description) in [
    ///     ("git-commit", "Write commit messages from staged changes."),
    ///     ("pdf-forms", "Fill in PDF forms and extract their fields."),
    /// ] {
    ///     std::fs::create_dir(dir.path().join(name))?;
    ///     std::fs::write(
    ///         dir.path().join(name).join("SKILL.md"),
    ///         format!("---\nname: {name}\ndescription: {description}\n---\n# {name}\n"),
    ///     )?;
    /// }
    /// let registry = Registry::load(RegistryConfig::with_sources(vec![Source::new(dir.path(), "user")]));
    /// let index = SkillIndex::build(registry.snapshot())?;
    ///
    /// // Query syntax is plain text: `AND`, `:` and the open parenthesis are just words.
    /// let hits = index.search(&SearchRequest {
    ///     text: "message: commit AND (staged changes",
    ///     ..Default::default()
    /// })?;
    /// assert_eq!(hits[0].name, "git-commit");
    /// assert!(hits[0].reason.contains("commit"), "{}", hits[0].reason);
    ///
    /// // Naming a skill puts it first, whatever else the request says.
    /// let hits = index.search(&SearchRequest { text: "use /pdf-forms for the commit", ..Default::default() })?;
    /// assert!(hits[0].explicit && hits[0].name == "pdf-forms");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn search(&self, req: &SearchRequest<'_>) -> Result<Vec<Match>, Error> {
        Ok(self.search_with(req, self.params())?.0)
    }

    /// [`SkillIndex::search`] with other parameters, and the request's gate. Request words
    /// the index does not know are first matched to its terms (`typo.rs`, unless
    /// `p.typos` is off), and each result's reason names the corrections.
    pub(crate) fn search_with(
        &self,
        req: &SearchRequest<'_>,
        p: &Params,
    ) -> Result<(Vec<Match>, Gate), Error> {
        let (mut hits, gate, corrected) = self.search_corrected(req, p)?;
        if let Some(note) = corrected.as_ref().and_then(|c| note(&c.corrections)) {
            for h in &mut hits {
                h.reason.push_str(&note);
            }
        }
        Ok((hits, gate))
    }

    /// [`SkillIndex::search_with`] without the corrections in the reasons, and the request
    /// as corrected (`None` when `p.typos` is off).
    pub(crate) fn search_corrected(
        &self,
        req: &SearchRequest<'_>,
        p: &Params,
    ) -> Result<(Vec<Match>, Gate, Option<Corrected>), Error> {
        let limit = req.limit.clamp(1, MAX_LIMIT);
        let corrected = if p.typos {
            Some(self.correct(req.text)?)
        } else {
            None
        };
        let read = SearchRequest {
            text: corrected.as_ref().map_or(req.text, |c| c.text.as_str()),
            recent_turns: req.recent_turns,
            limit: req.limit,
            filter: req.filter.clone(),
        };
        let (hits, gate) = self.rank(&read, limit, p, Some(limit))?;
        Ok((hits, gate, corrected))
    }
}
