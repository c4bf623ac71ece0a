package deploy

import "github.com/hashicorp/terraform-exec/tfexec"

// step is the plain-value decision for one terraform invocation; both the
// tfexec options and Args are rendered from it so they cannot disagree.
type step struct {
	action      string
	backend     []string // K=V, for init
	reconfigure bool     // init
	varFile     string
	vars        []string // K=V
	out         string   // plan file to write
	planFile    string   // saved plan to apply
}

func decide(cfg Config, action string) step {
	s := step{action: action}
	switch action {
	case ActionInit:
		for _, k := range sortedKeys(cfg.BackendConfig) {
			s.backend = append(s.backend, k+"="+cfg.BackendConfig[k])
		}
		if f := cfg.LocalStateFile(); f != "" {
			// The local backend of BackendOverrideFile, one file per stage.
			s.backend = append(s.backend, "path="+f)
		}
		// Each stage has its own backend key in the same working directory:
		// re-initialise instead of offering to migrate the previous stage's state.
		s.reconfigure = true
		return s
	case ActionOutput:
		return s
	}
	if action == ActionApply && !cfg.AutoApprove {
		// A saved plan carries its variables; terraform rejects -var with it.
		s.planFile = cfg.PlanFile()
		return s
	}
	s.varFile = cfg.VarFile
	s.vars = []string{"stage=" + cfg.Stage, "prefix=" + cfg.Prefix}
	for _, k := range sortedKeys(cfg.Vars) {
		s.vars = append(s.vars, k+"="+cfg.Vars[k])
	}
	if action == ActionPlan {
		s.out = cfg.PlanFile()
	}
	return s
}

// Args renders the terraform command line equivalent to the tfexec options
// for action (without the flags tfexec always adds, such as -no-color and,
// for apply and destroy, -auto-approve), e.g.
// ["plan", "-input=false", "-var=stage=dev", "-var=prefix=streamfold", "-out=dev.tfplan"].
func Args(cfg Config, action string) []string {
	s := decide(cfg, action)
	args := []string{action}
	if action != ActionOutput {
		args = append(args, "-input=false")
	} else {
		args = append(args, "-json")
	}
	for _, b := range s.backend {
		args = append(args, "-backend-config="+b)
	}
	if s.reconfigure {
		args = append(args, "-reconfigure")
	}
	if s.varFile != "" {
		args = append(args, "-var-file="+s.varFile)
	}
	for _, v := range s.vars {
		args = append(args, "-var="+v)
	}
	if s.out != "" {
		args = append(args, "-out="+s.out)
	}
	if s.planFile != "" {
		args = append(args, s.planFile)
	}
	return args
}

// sharedOption is an option that plan, apply and destroy all take.
type sharedOption interface {
	tfexec.PlanOption
	tfexec.ApplyOption
	tfexec.DestroyOption
}

// shared returns the var-file and variable options common to plan, apply
// and destroy, in the order the CLI renders them.
func (s step) shared() []sharedOption {
	var opts []sharedOption
	if s.varFile != "" {
		opts = append(opts, tfexec.VarFile(s.varFile))
	}
	for _, v := range s.vars {
		opts = append(opts, tfexec.Var(v))
	}
	return opts
}

// InitOptions are the options for terraform init.
func InitOptions(cfg Config) []tfexec.InitOption {
	s := decide(cfg, ActionInit)
	var opts []tfexec.InitOption
	for _, b := range s.backend {
		opts = append(opts, tfexec.BackendConfig(b))
	}
	if s.reconfigure {
		opts = append(opts, tfexec.Reconfigure(true))
	}
	return opts
}

// PlanOptions are the options for terraform plan.
func PlanOptions(cfg Config) []tfexec.PlanOption {
	s := decide(cfg, ActionPlan)
	var opts []tfexec.PlanOption
	for _, o := range s.shared() {
		opts = append(opts, o)
	}
	if s.out != "" {
		opts = append(opts, tfexec.Out(s.out))
	}
	return opts
}

// ApplyOptions are the options for terraform apply: the saved plan, or
// (with AutoApprove) the variables for a fresh plan-and-apply.
func ApplyOptions(cfg Config) []tfexec.ApplyOption {
	s := decide(cfg, ActionApply)
	var opts []tfexec.ApplyOption
	for _, o := range s.shared() {
		opts = append(opts, o)
	}
	if s.planFile != "" {
		opts = append(opts, tfexec.DirOrPlan(s.planFile))
	}
	return opts
}

// DestroyOptions are the options for terraform destroy.
func DestroyOptions(cfg Config) []tfexec.DestroyOption {
	s := decide(cfg, ActionDestroy)
	var opts []tfexec.DestroyOption
	for _, o := range s.shared() {
		opts = append(opts, o)
	}
	return opts
}

// OutputOptions are the options for terraform output: none, the backend
// (S3, or the local one with the stage's file) says where the state is.
func OutputOptions(Config) []tfexec.OutputOption { return nil }
