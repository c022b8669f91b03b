//! Metric groups created at run time (`ZET_experimental_metric_group`): create, add metrics of
//! one domain, close, destroy. Adding a metric changes the buffer layout, so an exporter made for
//! the old set of metrics is torn down; destroy tears the exporter down for good, and is refused
//! while an import of its memory is alive or the group is activated.

use level_zero_sys::*;

use crate::config::Export;
use crate::instance::{Group, Instance};
use crate::ops_driver::R;
use crate::registry::{HandleChanges, Obj, new_handle};

impl Instance {
    pub(crate) fn user_group_create(
        &mut self,
        d: usize,
        name: &str,
        description: &str,
        ch: &mut HandleChanges,
    ) -> R<usize> {
        if !self.metrics_enabled(d) {
            return Err(ZE_RESULT_ERROR_UNINITIALIZED);
        }
        let h = new_handle();
        let g = self.groups.len();
        self.groups.push(Group {
            handle: h,
            device: d,
            name: name.chars().take(255).collect(),
            description: description.chars().take(255).collect(),
            domain: 0,
            export: Export::Group,
            stream: false,
            tracer: false,
            decodable: Vec::new(),
            metrics: Vec::new(),
            user_created: true,
            closed: false,
            destroyed: false,
            active_in: None,
            buffer: None,
            owner: None,
        });
        self.devices[d].groups.push(g);
        ch.added.push((h, Obj::Group(g)));
        Ok(h)
    }

    fn find_metric(&self, metric: usize) -> Option<(usize, usize)> {
        self.groups.iter().enumerate().find_map(|(g, grp)| {
            if grp.user_created {
                return None;
            }
            grp.metrics.iter().position(|m| m.handle == metric).map(|i| (g, i))
        })
    }

    pub(crate) fn user_group_add(&mut self, g: usize, metric: usize) -> R<Result<(), String>> {
        if !self.groups[g].user_created {
            return Err(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
        }
        if self.groups[g].active_in.is_some() || self.live_imports_of(g) > 0 {
            return Err(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);
        }
        let Some((src, i)) = self.find_metric(metric) else {
            return Err(ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
        };
        if self.groups[src].tracer {
            return Ok(Err(
                "the metric belongs to a tracer-based group: its events are read with the metric tracer".into()
            ));
        }
        let (src_dev, src_domain) = (self.groups[src].device, self.groups[src].domain);
        if src_dev != self.groups[g].device {
            return Ok(Err("the metric belongs to another device".into()));
        }
        if !self.groups[g].metrics.is_empty() && self.groups[g].domain != src_domain {
            return Ok(Err(format!(
                "the metric is in domain {src_domain}, the group in domain {}",
                self.groups[g].domain
            )));
        }
        let m = self.groups[src].metrics[i].clone();
        // The layout changes: an exporter made for the old set of metrics is torn down.
        self.check_mappings(g, "zetMetricGroupAddMetricExp");
        self.retire_buffer(g);
        let grp = &mut self.groups[g];
        if !grp.metrics.iter().any(|x| x.handle == m.handle) {
            grp.domain = src_domain;
            grp.metrics.push(m);
        }
        grp.closed = false;
        Ok(Ok(()))
    }

    pub(crate) fn user_group_close(&mut self, g: usize) -> R<()> {
        if !self.groups[g].user_created {
            return Err(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
        }
        if self.groups[g].metrics.is_empty() {
            return Err(ZE_RESULT_ERROR_INVALID_ARGUMENT);
        }
        self.groups[g].closed = true;
        Ok(())
    }

    pub(crate) fn user_group_destroy(&mut self, g: usize, ch: &mut HandleChanges) -> R<()> {
        if !self.groups[g].user_created {
            return Err(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
        }
        let (name, h) = (self.groups[g].name.clone(), self.groups[g].handle);
        let live = self.live_imports_of(g);
        if live > 0 {
            self.violation(
                "teardown_with_live_import",
                h,
                format!("user metric group {name} destroyed while {live} import(s) of its exported memory are alive"),
            );
            return Err(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);
        }
        if self.groups[g].active_in.is_some() {
            self.violation("teardown_order", h, format!("user metric group {name} destroyed while activated"));
            return Err(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);
        }
        self.check_fds(g, "at zetMetricGroupDestroyExp");
        self.check_mappings(g, "zetMetricGroupDestroyExp");
        self.retire_buffer(g);
        self.groups[g].destroyed = true;
        ch.removed.push(h);
        self.teardown_step();
        Ok(())
    }
}
