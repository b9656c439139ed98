# SPDX-License-Identifier: LGPL-2.1-or-later
# bash completion for cordonctl, cordond and cordon-launch. Installed once per
# command name under share/bash-completion/completions/ (bash-completion
# loads the file named after the command being completed).

_cordon_connector_ids()
{
	# Connector ids are profile file names; listing them needs no daemon.
	local dir=/etc/cordon/profiles f
	for f in "$dir"/*.yaml; do
		[[ -e $f ]] || continue
		f=${f##*/}
		printf '%s\n' "${f%.yaml}"
	done
}

_cordonctl()
{
	local cur prev words cword
	_init_completion || return

	local cmds="status capabilities connectors inventory grants approvals delegations actions audit revoke-all reload mcp"
	local i cmd="" sub="" nargs=0
	for ((i = 1; i < cword; i++)); do
		case ${words[i]} in
		--socket) ((i++)) ;;
		-*) ;;
		*)
			if [[ -z $cmd ]]; then
				cmd=${words[i]}
			elif [[ -z $sub ]]; then
				sub=${words[i]}
			else
				((nargs++))
			fi
			;;
		esac
	done

	case $prev in
	--socket | --key)
		_filedir
		return
		;;
	--connector)
		COMPREPLY=($(compgen -W "$(_cordon_connector_ids)" -- "$cur"))
		return
		;;
	esac

	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "--socket --json --help --version --all --connector --count --key --reveal --code --fingerprint --allow-unknown --yes" -- "$cur"))
		return
	fi
	if [[ -z $cmd ]]; then
		COMPREPLY=($(compgen -W "$cmds" -- "$cur"))
		return
	fi
	case $cmd in
	connectors)
		if [[ -z $sub ]]; then
			COMPREPLY=($(compgen -W "list add remove restart" -- "$cur"))
		elif ((nargs == 0)) && [[ $sub != list ]]; then
			COMPREPLY=($(compgen -W "$(_cordon_connector_ids)" -- "$cur"))
		fi
		;;
	inventory)
		if [[ -z $sub ]]; then
			COMPREPLY=($(compgen -W "show review" -- "$cur"))
		elif ((nargs == 0)); then
			COMPREPLY=($(compgen -W "$(_cordon_connector_ids)" -- "$cur"))
		fi
		;;
	grants)
		if [[ -z $sub ]]; then
			COMPREPLY=($(compgen -W "show set add remove" -- "$cur"))
		elif ((nargs == 0)); then
			COMPREPLY=($(compgen -W "$(_cordon_connector_ids)" -- "$cur"))
		fi
		;;
	approvals) [[ -z $sub ]] && COMPREPLY=($(compgen -W "list show approve deny" -- "$cur")) ;;
	delegations) [[ -z $sub ]] && COMPREPLY=($(compgen -W "list approve deny revoke" -- "$cur")) ;;
	actions)
		if [[ -z $sub ]]; then
			COMPREPLY=($(compgen -W "list resolve" -- "$cur"))
		elif [[ $sub == resolve ]] && ((nargs == 1)); then
			COMPREPLY=($(compgen -W "succeeded failed" -- "$cur"))
		fi
		;;
	audit) [[ -z $sub ]] && COMPREPLY=($(compgen -W "tail verify" -- "$cur")) ;;
	esac
}
complete -F _cordonctl cordonctl

_cordond()
{
	local cur prev words cword
	_init_completion || return
	case $prev in
	--config | --launcher)
		_filedir
		return
		;;
	--profiles | --state | --runtime)
		_filedir -d
		return
		;;
	--user)
		COMPREPLY=($(compgen -u -- "$cur"))
		return
		;;
	--operator-group | --gateway-group)
		COMPREPLY=($(compgen -g -- "$cur"))
		return
		;;
	--http | --approval-wait | --result-cap | --max-sessions) return ;;
	esac
	COMPREPLY=($(compgen -W "--config --profiles --state --runtime --user --operator-group --gateway-group --http --approval-wait --result-cap --launcher --max-sessions --debug --version --help" -- "$cur"))
}
complete -F _cordond cordond

_cordon_launch()
{
	local cur prev words cword
	_init_completion || return
	case $prev in
	--check | --profile | --report)
		_filedir
		return
		;;
	--profiles)
		_filedir -d
		return
		;;
	--root | --serve) return ;;
	esac
	if [[ $cur == -* || $cword -eq 1 ]]; then
		COMPREPLY=($(compgen -W "--probe --human --check --profile --root --report --serve --profiles --version --help" -- "$cur"))
		return
	fi
	_filedir
}
complete -F _cordon_launch cordon-launch
