package steps

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/otelcol-handoff/otelcol-handoff/internal/agentgraph"
	"github.com/otelcol-handoff/otelcol-handoff/internal/rules/check"
)

// Cost budgets: maxCostUsd on EXPECT_AGENT_BUDGET bounds the cost of the agent's subtree
// (agentgraph's cost rollup: reported costs, else tokens times the price table or the
// pricing overrides). A subtree with a call whose model has no price has an unknown cost:
// over the limit with the known part alone it fails all the same; otherwise the step cannot
// be decided and its outcome is an error whose message starts "incomplete: no price for
// model X" (never a pass on a cost taken as 0).

// incompletePrefix starts the message of a cost budget that could not be decided.
const incompletePrefix = "incomplete: "

// validateCost checks maxCostUsd.
func (s *BudgetStep) validateCost(errs *check.Errors) {
	if v := s.MaxCostUsd; v != nil && (*v < 0 || math.IsNaN(*v) || math.IsInf(*v, 0)) {
		errs.Add("maxCostUsd", "must be a finite amount of 0 or more, got %g", *v)
	}
}

// costWant is the expectation text of maxCostUsd ("" when unset).
func (s *BudgetStep) costWant() string {
	if s.MaxCostUsd == nil {
		return ""
	}
	return "cost <= $" + usd(*s.MaxCostUsd)
}

// costActual is the cost part of a run's actual text ("" when maxCostUsd is unset).
func (s *BudgetStep) costActual(sub *agentgraph.Rollup) string {
	switch {
	case s.MaxCostUsd == nil:
		return ""
	case len(sub.UnpricedModels) > 0:
		return fmt.Sprintf(", cost at least $%s (incomplete)", usd(sub.CostUSD))
	}
	return ", cost $" + usd(sub.CostUSD)
}

// checkCost adds the run's cost problem, or why its cost budget cannot be checked.
func (s *BudgetStep) checkCost(at string, sub *agentgraph.Rollup, problems, unknown []string) ([]string, []string) {
	if s.MaxCostUsd == nil {
		return problems, unknown
	}
	limit := *s.MaxCostUsd
	switch {
	case sub.CostUSD > limit && len(sub.UnpricedModels) > 0:
		problems = append(problems, fmt.Sprintf("%s cost at least $%s, over maxCostUsd %s (%s)", at, usd(sub.CostUSD), usd(limit), noPrice(sub)))
	case sub.CostUSD > limit:
		problems = append(problems, fmt.Sprintf("%s cost $%s, over maxCostUsd %s", at, usd(sub.CostUSD), usd(limit)))
	case len(sub.UnpricedModels) > 0:
		unknown = append(unknown, fmt.Sprintf("%s%s (%s): the cost is unknown, so maxCostUsd %s cannot be checked; price %s under pricing.models",
			incompletePrefix, noPrice(sub), at, usd(limit), oneOrMany(len(sub.UnpricedModels), "the model", "the models")))
	}
	return problems, unknown
}

// noPrice names the models without a price: "no price for model X" (or "models X, Y").
func noPrice(sub *agentgraph.Rollup) string {
	return "no price for " + oneOrMany(len(sub.UnpricedModels), "model", "models") + " " + strings.Join(sub.UnpricedModels, ", ")
}

func oneOrMany(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// usd writes an amount in dollars without float noise (at most 8 significant digits after
// the leading zeros).
func usd(v float64) string {
	return strconv.FormatFloat(v, 'g', 8, 64)
}
