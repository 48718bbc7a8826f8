//! Chart builders the experiments share: a row's score per category (workload, server,
//! demand mode, case) with the interval of its median over forks, and the paired ratios per
//! group with their repeat intervals. Each takes its figures from the run's rows and
//! `ratios[]` only; a seed's published figures or a target go beside them as references.

use crate::results::{Chart, Results, Row, Status};

/// The x position of each category, in the order they were first met (from 1).
#[derive(Debug, Default)]
pub struct Categories(Vec<String>);

impl Categories {
    /// The x of `name`, adding it when new.
    pub fn x(&mut self, name: &str) -> f64 {
        let i = match self.0.iter().position(|n| n == name) {
            Some(i) => i,
            None => {
                self.0.push(name.to_string());
                self.0.len() - 1
            }
        };
        (i + 1) as f64
    }

    /// The x of `name`, if it is one.
    pub fn get(&self, name: &str) -> Option<f64> {
        self.0.iter().position(|n| n == name).map(|i| (i + 1) as f64)
    }

    /// The chart's names for its x axis.
    pub fn names(&self) -> Vec<(f64, String)> {
        self.0.iter().enumerate().map(|(i, n)| ((i + 1) as f64, n.clone())).collect()
    }
}

/// Adds `(x, y)` to series `name` of `c` (made when new), and its interval when there is one.
pub fn push_point(c: &mut Chart, name: &str, x: f64, y: f64, interval: Option<[f64; 2]>) {
    match c.series.iter_mut().find(|(n, _)| n == name) {
        Some((_, v)) => v.push((x, y)),
        None => c.series.push((name.to_string(), vec![(x, y)])),
    }
    if let Some([lo, hi]) = interval {
        match c.intervals.iter_mut().find(|(n, _)| n == name) {
            Some((_, v)) => v.push((x, lo, hi)),
            None => c.intervals.push((name.to_string(), vec![(x, lo, hi)])),
        }
    }
}

/// The rows' scores against categories: for each row that passed its checks and that
/// `place` places as (series, category), its `score` at the category's x, with `score_ci`
/// (the interval of the median over forks) as its bar. `None` when no row has a score.
pub fn score_chart(
    r: &Results,
    (title, x_label, y_label): (&str, &str, &str),
    place: impl Fn(&Row) -> Option<(String, String)>,
) -> Option<(Chart, Categories)> {
    let mut c = Chart {
        title: title.into(),
        x_label: x_label.into(),
        y_label: y_label.into(),
        ..Default::default()
    };
    let mut cats = Categories::default();
    for x in r.results.iter().filter(|x| x.status == Status::Ok) {
        let (Some(score), Some((series, cat))) = (x.score, place(x)) else { continue };
        let at = cats.x(&cat);
        push_point(&mut c, &series, at, score, x.score_ci);
    }
    c.x_names = cats.names();
    (!c.series.is_empty()).then_some((c, cats))
}

/// The paired ratios against their groups (a category each, in the order of the rows): a
/// series per (row, baseline) at its median over rounds, its repeat interval as the bar.
/// `None` when no ratio has a median.
pub fn ratio_chart(r: &Results, title: &str, x_label: &str, y_label: &str) -> Option<Chart> {
    let mut cats = Categories::default();
    for x in &r.results {
        cats.x(&x.group);
    }
    let mut c = Chart {
        title: title.into(),
        x_label: x_label.into(),
        y_label: y_label.into(),
        ..Default::default()
    };
    for q in &r.ratios {
        let Some(m) = q.median else { continue };
        let at = cats.x(&q.group);
        let ci = q.ci_low.zip(q.ci_high).map(|(a, b)| [a, b]);
        push_point(&mut c, &format!("{}/{}", q.variant, q.baseline), at, m, ci);
    }
    c.x_names = cats.names();
    (!c.series.is_empty()).then_some(c)
}

/// Adds a reference series `name` to `c`: per category of `cats` that has one, its figure.
pub fn add_reference(c: &mut Chart, cats: &Categories, name: &str, figures: &[(String, f64)]) {
    let pts: Vec<(f64, f64)> =
        figures.iter().filter_map(|(cat, y)| Some((cats.get(cat)?, *y))).collect();
    if !pts.is_empty() {
        c.references.push((name.to_string(), pts));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::fixture::{ratio, results, row};
    use serde_json::json;

    #[test]
    fn scores_go_to_their_category_with_their_interval_and_failed_rows_stay_out() {
        let mut rows = vec![
            row("a", "g", 2.0, Some([1.5, 2.5]), json!({})),
            row("b", "g", 3.0, None, json!({})),
            row("c", "g", 9.0, Some([8.0, 10.0]), json!({})),
        ];
        rows[2].status = Status::Invalid;
        let r = results("x", rows, Vec::new());
        let (c, cats) = score_chart(&r, ("t", "x", "y"), |x| Some(("s".into(), x.label.clone())))
            .expect("a chart");
        assert_eq!(c.series, vec![("s".to_string(), vec![(1.0, 2.0), (2.0, 3.0)])]);
        assert_eq!(c.intervals, vec![("s".to_string(), vec![(1.0, 1.5, 2.5)])]);
        assert_eq!(c.x_names, vec![(1.0, "a".to_string()), (2.0, "b".to_string())]);
        assert_eq!(cats.get("c"), None, "an invalid row is no category");
    }

    #[test]
    fn ratios_sit_at_their_group_with_their_repeat_interval() {
        let rows = vec![
            row("u", "size=0", 1.0, None, json!({})),
            row("u", "size=64", 1.0, None, json!({})),
        ];
        let ratios = vec![
            ratio("p", "u", "size=64", 2.5, Some([2.0, 3.0])),
            ratio("p", "u", "size=0", 1.1, None),
        ];
        let c = ratio_chart(&results("x", rows, ratios), "t", "x", "y").expect("a chart");
        assert_eq!(c.series, vec![("p/u".to_string(), vec![(2.0, 2.5), (1.0, 1.1)])]);
        assert_eq!(c.intervals, vec![("p/u".to_string(), vec![(2.0, 2.0, 3.0)])]);
        assert_eq!(c.x_names[0], (1.0, "size=0".to_string()));
    }
}
