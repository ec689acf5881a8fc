package tfprovider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"kcore.dev/kcore/pkg/api"
	"kcore.dev/kcore/pkg/apiv1"
	"kcore.dev/kcore/pkg/client"
	"kcore.dev/kcore/pkg/plan"
)

// defaultTimeout is the timeout attribute's default, kctl's --timeout's.
const defaultTimeout = 15 * time.Minute

// maxDeleteAttempts bounds how often destroy plans a deletion again when
// the controller found the previous plan stale.
const maxDeleteAttempts = 3

// pollInterval is how often a wait reads the object again.
const pollInterval = time.Second

// ErrStalePlan is the controller refusing the plan tofu showed because
// its state changed since.
var ErrStalePlan = errors.New("the controller's state changed since this plan was computed; run tofu plan (or apply) again to see the new plan")

// ModifyPlan asks the controller for its plan of the change: blocking
// issues are errors on the attributes they name, warnings are warnings,
// the planned values are what the controller will store, plan_steps lists
// the steps per node, and the plan's index and hash go in private state.
func (r *objectResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if r.c == nil {
		return
	}
	// A plan key left from an earlier change must never be applied.
	resp.Diagnostics.Append(resp.Private.SetKey(ctx, privatePlan, nil)...)
	if req.Plan.Raw.IsNull() {
		r.planDestroy(ctx, req, resp)
		return
	}
	obj, err := r.decode(req.Config.Raw)
	if errors.Is(err, errUnknown) {
		resp.Diagnostics.AddWarning("kcore plan computed at apply", "Some values are not known until apply, so kcore's plan for "+r.k.resource+" is computed and applied then, without review.")
		return
	}
	if err != nil {
		resp.Diagnostics.AddError("plan "+r.k.resource, err.Error())
		return
	}
	name := r.k.name(obj)
	presp, diags := r.plan(ctx, r.k.request(obj))
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	p := r.k.planned(presp, name)
	if !req.State.Raw.IsNull() {
		var prior string
		_ = req.State.GetAttribute(ctx, path.Root(attrID), &prior)
		if prior != "" && prior != name {
			resp.RequiresReplace = append(resp.RequiresReplace, path.Root("name"))
		}
	}
	if p.action == plan.ActionReplace {
		for _, d := range p.diff {
			if at, ok := tfPath(r.ks.fields, d); ok {
				resp.RequiresReplace = append(resp.RequiresReplace, at)
			}
		}
	}
	if p.action == plan.ActionNoOp || p.desired == nil {
		planned, err := r.planUnchanged(ctx, req, name)
		if err != nil {
			resp.Diagnostics.AddError("plan "+r.k.resource, err.Error())
			return
		}
		resp.Plan.Raw = planned
		return
	}
	ref := planRef{Index: presp.Plan.Index, Hash: presp.Hash}
	doc, err := fromObject(p.desired)
	var planned tftypes.Value
	if err == nil {
		planned, err = r.withFields(req.Plan.Raw, doc, req.Config.Raw, shapePlan)
	}
	if err == nil {
		planned, err = withAttrs(planned, map[string]tftypes.Value{
			attrID:        tftypes.NewValue(tftypes.String, name),
			attrPhase:     tftypes.NewValue(tftypes.String, tftypes.UnknownValue),
			attrPlanSteps: stringList(p.lines),
			attrPlanRef:   tftypes.NewValue(tftypes.String, ref.String()),
		})
	}
	if err != nil {
		resp.Diagnostics.AddError("plan "+r.k.resource, err.Error())
		return
	}
	resp.Plan.Raw = planned
	priv, _ := json.Marshal(ref)
	resp.Diagnostics.Append(resp.Private.SetKey(ctx, privatePlan, priv)...)
}

// planUnchanged plans an object kcore has nothing to do for: the values
// the configuration leaves out are the ones the state (or, for a create of
// an object stored already, the controller) has, and the computed
// attributes stay as they are.
func (r *objectResource) planUnchanged(ctx context.Context, req resource.ModifyPlanRequest, name string) (tftypes.Value, error) {
	var doc map[string]any
	var err error
	if req.State.Raw.IsNull() {
		var stored object
		if stored, err = r.get(ctx, name); err == nil {
			doc, err = fromObject(stored)
		}
	} else {
		doc, err = valueDoc(req.State.Raw, r.ks.fields)
	}
	if err != nil {
		return tftypes.Value{}, err
	}
	planned, err := r.withFields(req.Plan.Raw, doc, req.Config.Raw, shapePlan)
	if err != nil {
		return tftypes.Value{}, err
	}
	set := map[string]tftypes.Value{attrID: tftypes.NewValue(tftypes.String, name)}
	if attrs, err := objectAttrs(req.State.Raw); err == nil && attrs != nil {
		set[attrPhase] = attrs[attrPhase]
		set[attrPlanSteps] = attrs[attrPlanSteps]
		set[attrPlanRef] = attrs[attrPlanRef]
	}
	return withAttrs(planned, set)
}

// planDestroy shows the teardown plan as a warning.
func (r *objectResource) planDestroy(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	var id string
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root(attrID), &id)...)
	opts, err := readOptions(req.State.Raw)
	if err != nil || id == "" {
		return
	}
	presp, diags := r.plan(ctx, r.k.deleteRequest(id, opts))
	resp.Diagnostics.Append(diags...)
	if presp != nil {
		p := r.k.planned(presp, id)
		resp.Diagnostics.AddWarning("kcore plan: delete "+id, joinLines(p.lines, opts, r.k.volumes))
	}
}

// joinLines is the text of a teardown plan; volumes adds what happens to
// the cluster's volumes.
func joinLines(lines []string, o options, volumes bool) string {
	s := ""
	for _, l := range lines {
		s += l + "\n"
	}
	if !volumes {
		return strings.TrimSuffix(s, "\n")
	}
	if o.purge {
		return s + "Volumes are removed with their data (purge_volumes)."
	}
	return s + "Volumes are kept with their data (set purge_volumes to remove them)."
}

// plan asks the controller for a plan and turns its issues into diagnostics.
func (r *objectResource) plan(ctx context.Context, req apiv1.PlanRequest) (*apiv1.PlanResponse, diag.Diagnostics) {
	var diags diag.Diagnostics
	resp, err := r.c.Plan(ctx, req)
	if err != nil {
		diags.AddError("kcore plan", fmt.Sprintf("compute plan: %v", err))
		return nil, diags
	}
	if resp.Forbidden != "" {
		diags.AddError("kcore plan", "your role may not apply this plan: "+resp.Forbidden)
	}
	diags.Append(r.issueDiags(resp.Plan.Blocking, true)...)
	diags.Append(r.issueDiags(resp.Plan.Warnings, false)...)
	return resp, diags
}

// issueDiags turns plan issues into errors or warnings on the attribute
// each names.
func (r *objectResource) issueDiags(issues []plan.Issue, blocking bool) diag.Diagnostics {
	var diags diag.Diagnostics
	for _, is := range issues {
		summary := "kcore plan: " + is.Code
		detail := is.Message
		at, ok := tfPath(r.ks.fields, is.Path)
		switch {
		case ok:
			detail = fmt.Sprintf("%s (%s): %s", at, is.Path, detail)
		case is.Path != "":
			detail = is.Path + ": " + detail
		}
		if is.Node != "" {
			detail += " (node " + is.Node + ")"
		}
		if is.Fix != "" {
			detail += "\nFix: " + is.Fix
		}
		switch {
		case blocking && ok:
			diags.AddAttributeError(at, summary, detail)
		case blocking:
			diags.AddError(summary, detail)
		case ok:
			diags.AddAttributeWarning(at, summary, detail)
		default:
			diags.AddWarning(summary, detail)
		}
	}
	return diags
}

// apply sends the reviewed plan (ref, from ModifyPlan) back to the
// controller and returns the new state. prior is the state an update
// starts from (no value for create).
func (r *objectResource) apply(ctx context.Context, config, planned, prior tftypes.Value, ref []byte) (tftypes.Value, diag.Diagnostics) {
	var diags diag.Diagnostics
	obj, err := r.decode(config)
	if err != nil {
		diags.AddError("apply "+r.k.resource, err.Error())
		return tftypes.Value{}, diags
	}
	opts, err := readOptions(planned)
	if err != nil {
		diags.AddError("apply "+r.k.resource, err.Error())
		return tftypes.Value{}, diags
	}
	req := r.k.request(obj)
	pr, reviewed, err := reviewedPlan(planned, ref)
	if err != nil {
		diags.AddError("apply "+r.k.resource, err.Error())
		return tftypes.Value{}, diags
	}
	if !reviewed {
		presp, d := r.plan(ctx, req)
		diags.Append(d...)
		if diags.HasError() {
			return tftypes.Value{}, diags
		}
		pr = planRef{Index: presp.Plan.Index, Hash: presp.Hash}
		planned, err = withAttrs(planned, map[string]tftypes.Value{
			attrPlanSteps: stringList(r.k.planned(presp, r.k.name(obj)).lines),
			attrPlanRef:   tftypes.NewValue(tftypes.String, pr.String()),
		})
		if err != nil {
			diags.AddError("apply "+r.k.resource, err.Error())
			return tftypes.Value{}, diags
		}
	}
	if !unchanged(planned, prior) {
		d, _ := r.commit(ctx, req, pr)
		diags.Append(d...)
		if diags.HasError() {
			return tftypes.Value{}, diags
		}
	}
	name := r.k.name(obj)
	phase, err := r.waitPhase(ctx, name, opts)
	if err != nil {
		diags.AddError("apply "+r.k.resource, err.Error())
		return tftypes.Value{}, diags
	}
	state, err := withAttrs(planned, map[string]tftypes.Value{
		attrID:    tftypes.NewValue(tftypes.String, name),
		attrPhase: tftypes.NewValue(tftypes.String, phase),
	})
	if err != nil {
		diags.AddError("apply "+r.k.resource, err.Error())
	}
	return state, diags
}

// commit applies a reviewed plan; stale reports the controller refusing
// it as stale.
func (r *objectResource) commit(ctx context.Context, req apiv1.PlanRequest, pr planRef) (diags diag.Diagnostics, stale bool) {
	_, err := r.c.Apply(ctx, req, pr.Index, pr.Hash)
	if client.IsStalePlan(err) {
		diags.AddError("kcore apply: stale plan", fmt.Errorf("%w: %w", ErrStalePlan, err).Error())
		return diags, true
	}
	if issues, ok := client.BlockingIssues(err); ok {
		diags.Append(r.issueDiags(issues, true)...)
		return diags, false
	}
	if err != nil {
		diags.AddError("kcore apply", fmt.Sprintf("apply plan: %v", err))
	}
	return diags, false
}

// waitPhase returns the object's phase, after waiting for ready when asked.
func (r *objectResource) waitPhase(ctx context.Context, name string, o options) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	for {
		obj, err := r.get(ctx, name)
		if err != nil {
			return "", err
		}
		phase := r.k.phase(obj)
		switch {
		case !o.wait || r.k.apiKind != api.KindKubernetesCluster:
			return phase, nil
		case obj.(*api.KubernetesCluster).ReadyAt(time.Now()):
			return phase, nil
		case phase == api.PhaseDegraded:
			return phase, fmt.Errorf("wait for %s to be ready: it is degraded", name)
		}
		select {
		case <-ctx.Done():
			return phase, fmt.Errorf("wait for %s to be ready: still %s after %s: %w", name, phase, o.timeout, ctx.Err())
		case <-t.C:
		}
	}
}

// Delete tears a cluster down the way kctl kubernetes delete does (a plan
// of the deletion, applied; volumes kept unless purge_volumes) and removes
// a ClusterUpdate the way kctl update delete does (a plan of the removal,
// refused while its rollout is under way); wait_ready waits until the
// object is gone. An object no longer stored is already deleted.
func (r *objectResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var id string
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root(attrID), &id)...)
	opts, err := readOptions(req.State.Raw)
	if err != nil {
		resp.Diagnostics.AddError("delete "+r.k.resource, err.Error())
		return
	}
	if resp.Diagnostics.HasError() {
		return
	}
	if _, err := r.get(ctx, id); errors.Is(err, client.ErrNotFound) {
		return
	}
	preq := r.k.deleteRequest(id, opts)
	// The destroy was approved as a whole: a plan made stale by another
	// object's write in between (clusters sharing machines are planned
	// together) is computed again, a bounded number of times.
	for attempt := 1; ; attempt++ {
		presp, diags := r.plan(ctx, preq)
		if diags.HasError() {
			resp.Diagnostics.Append(diags...)
			return
		}
		diags, stale := r.commit(ctx, preq, planRef{Index: presp.Plan.Index, Hash: presp.Hash})
		if !stale || attempt == maxDeleteAttempts {
			resp.Diagnostics.Append(diags...)
			break
		}
	}
	if resp.Diagnostics.HasError() || !opts.wait {
		return
	}
	if err := r.waitGone(ctx, id, opts.timeout); err != nil {
		resp.Diagnostics.AddError("delete "+r.k.resource, err.Error())
	}
}

// waitGone waits until the object is no longer stored.
func (r *objectResource) waitGone(ctx context.Context, name string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	for {
		_, err := r.get(ctx, name)
		if errors.Is(err, client.ErrNotFound) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for %s to be deleted: still there after %s: %w", name, timeout, ctx.Err())
		case <-t.C:
		}
	}
}

// stringList is a list of strings value.
func stringList(lines []string) tftypes.Value {
	elems := make([]tftypes.Value, len(lines))
	for i, l := range lines {
		elems[i] = tftypes.NewValue(tftypes.String, l)
	}
	return tftypes.NewValue(tftypes.List{ElementType: tftypes.String}, elems)
}

// String is the plan_ref attribute: INDEX/HASH.
func (p planRef) String() string { return fmt.Sprintf("%d/%s", p.Index, p.Hash) }

// reviewedPlan finds the plan the user reviewed: in private state (update)
// or in the planned plan_ref (create, whose request carries no private
// state). It reports false when the plan was not computed at plan time.
func reviewedPlan(planned tftypes.Value, private []byte) (planRef, bool, error) {
	var pr planRef
	if len(private) > 0 {
		if err := json.Unmarshal(private, &pr); err != nil {
			return planRef{}, false, fmt.Errorf("read the reviewed plan from private state: %w", err)
		}
		return pr, true, nil
	}
	attrs, err := objectAttrs(planned)
	if err != nil {
		return planRef{}, false, err
	}
	v := attrs[attrPlanRef]
	if v.IsNull() || !v.IsKnown() {
		return planRef{}, false, nil
	}
	var s string
	if err := v.As(&s); err != nil {
		return planRef{}, false, err
	}
	if _, err := fmt.Sscanf(s, "%d/%s", &pr.Index, &pr.Hash); err != nil {
		return planRef{}, false, fmt.Errorf("read plan_ref %q: %w", s, err)
	}
	return pr, true, nil
}

// unchanged reports whether an update carries the plan_ref of the state it
// starts from: kcore planned no change, only the provider's own attributes
// changed, and there is nothing to apply.
func unchanged(planned, prior tftypes.Value) bool {
	if prior.Type() == nil || prior.IsNull() {
		return false
	}
	a, errA := objectAttrs(planned)
	b, errB := objectAttrs(prior)
	return errA == nil && errB == nil && a[attrPlanRef].IsKnown() && a[attrPlanRef].Equal(b[attrPlanRef])
}
